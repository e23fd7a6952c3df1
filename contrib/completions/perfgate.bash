_perfgate() {
    local i cur prev opts cmd
    COMPREPLY=()
    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
        cur="$2"
    else
        cur="${COMP_WORDS[COMP_CWORD]}"
    fi
    prev="$3"
    cmd=""
    opts=""

    for i in "${COMP_WORDS[@]:0:COMP_CWORD}"
    do
        case "${cmd},${i}" in
            ",$1")
                cmd="perfgate"
                ;;
            perfgate,ab)
                cmd="perfgate__subcmd__ab"
                ;;
            perfgate,baseline)
                cmd="perfgate__subcmd__baseline"
                ;;
            perfgate,bisect)
                cmd="perfgate__subcmd__bisect"
                ;;
            perfgate,check)
                cmd="perfgate__subcmd__check"
                ;;
            perfgate,comment)
                cmd="perfgate__subcmd__comment"
                ;;
            perfgate,compare)
                cmd="perfgate__subcmd__compare"
                ;;
            perfgate,completions)
                cmd="perfgate__subcmd__completions"
                ;;
            perfgate,fake-server)
                cmd="perfgate__subcmd__fake__subcmd__server"
                ;;
            perfgate,help)
                cmd="perfgate__subcmd__help"
                ;;
            perfgate,history)
                cmd="perfgate__subcmd__history"
                ;;
            perfgate,import)
                cmd="perfgate__subcmd__import"
                ;;
            perfgate,man)
                cmd="perfgate__subcmd__man"
                ;;
            perfgate,merge)
                cmd="perfgate__subcmd__merge"
                ;;
            perfgate,plan)
                cmd="perfgate__subcmd__plan"
                ;;
            perfgate,report)
                cmd="perfgate__subcmd__report"
                ;;
            perfgate,run)
                cmd="perfgate__subcmd__run"
                ;;
            perfgate__subcmd__baseline,calibrate)
                cmd="perfgate__subcmd__baseline__subcmd__calibrate"
                ;;
            perfgate__subcmd__baseline,help)
                cmd="perfgate__subcmd__baseline__subcmd__help"
                ;;
            perfgate__subcmd__baseline,noise)
                cmd="perfgate__subcmd__baseline__subcmd__noise"
                ;;
            perfgate__subcmd__baseline,promote)
                cmd="perfgate__subcmd__baseline__subcmd__promote"
                ;;
            perfgate__subcmd__baseline,record)
                cmd="perfgate__subcmd__baseline__subcmd__record"
                ;;
            perfgate__subcmd__baseline,schema)
                cmd="perfgate__subcmd__baseline__subcmd__schema"
                ;;
            perfgate__subcmd__baseline,show)
                cmd="perfgate__subcmd__baseline__subcmd__show"
                ;;
            perfgate__subcmd__baseline__subcmd__help,calibrate)
                cmd="perfgate__subcmd__baseline__subcmd__help__subcmd__calibrate"
                ;;
            perfgate__subcmd__baseline__subcmd__help,help)
                cmd="perfgate__subcmd__baseline__subcmd__help__subcmd__help"
                ;;
            perfgate__subcmd__baseline__subcmd__help,noise)
                cmd="perfgate__subcmd__baseline__subcmd__help__subcmd__noise"
                ;;
            perfgate__subcmd__baseline__subcmd__help,promote)
                cmd="perfgate__subcmd__baseline__subcmd__help__subcmd__promote"
                ;;
            perfgate__subcmd__baseline__subcmd__help,record)
                cmd="perfgate__subcmd__baseline__subcmd__help__subcmd__record"
                ;;
            perfgate__subcmd__baseline__subcmd__help,schema)
                cmd="perfgate__subcmd__baseline__subcmd__help__subcmd__schema"
                ;;
            perfgate__subcmd__baseline__subcmd__help,show)
                cmd="perfgate__subcmd__baseline__subcmd__help__subcmd__show"
                ;;
            perfgate__subcmd__help,ab)
                cmd="perfgate__subcmd__help__subcmd__ab"
                ;;
            perfgate__subcmd__help,baseline)
                cmd="perfgate__subcmd__help__subcmd__baseline"
                ;;
            perfgate__subcmd__help,bisect)
                cmd="perfgate__subcmd__help__subcmd__bisect"
                ;;
            perfgate__subcmd__help,check)
                cmd="perfgate__subcmd__help__subcmd__check"
                ;;
            perfgate__subcmd__help,comment)
                cmd="perfgate__subcmd__help__subcmd__comment"
                ;;
            perfgate__subcmd__help,compare)
                cmd="perfgate__subcmd__help__subcmd__compare"
                ;;
            perfgate__subcmd__help,completions)
                cmd="perfgate__subcmd__help__subcmd__completions"
                ;;
            perfgate__subcmd__help,fake-server)
                cmd="perfgate__subcmd__help__subcmd__fake__subcmd__server"
                ;;
            perfgate__subcmd__help,help)
                cmd="perfgate__subcmd__help__subcmd__help"
                ;;
            perfgate__subcmd__help,history)
                cmd="perfgate__subcmd__help__subcmd__history"
                ;;
            perfgate__subcmd__help,import)
                cmd="perfgate__subcmd__help__subcmd__import"
                ;;
            perfgate__subcmd__help,man)
                cmd="perfgate__subcmd__help__subcmd__man"
                ;;
            perfgate__subcmd__help,merge)
                cmd="perfgate__subcmd__help__subcmd__merge"
                ;;
            perfgate__subcmd__help,plan)
                cmd="perfgate__subcmd__help__subcmd__plan"
                ;;
            perfgate__subcmd__help,report)
                cmd="perfgate__subcmd__help__subcmd__report"
                ;;
            perfgate__subcmd__help,run)
                cmd="perfgate__subcmd__help__subcmd__run"
                ;;
            perfgate__subcmd__help__subcmd__baseline,calibrate)
                cmd="perfgate__subcmd__help__subcmd__baseline__subcmd__calibrate"
                ;;
            perfgate__subcmd__help__subcmd__baseline,noise)
                cmd="perfgate__subcmd__help__subcmd__baseline__subcmd__noise"
                ;;
            perfgate__subcmd__help__subcmd__baseline,promote)
                cmd="perfgate__subcmd__help__subcmd__baseline__subcmd__promote"
                ;;
            perfgate__subcmd__help__subcmd__baseline,record)
                cmd="perfgate__subcmd__help__subcmd__baseline__subcmd__record"
                ;;
            perfgate__subcmd__help__subcmd__baseline,schema)
                cmd="perfgate__subcmd__help__subcmd__baseline__subcmd__schema"
                ;;
            perfgate__subcmd__help__subcmd__baseline,show)
                cmd="perfgate__subcmd__help__subcmd__baseline__subcmd__show"
                ;;
            *)
                ;;
        esac
    done

    case "${cmd}" in
        perfgate)
            opts="-h -V --help --version run import baseline check ab bisect plan compare report history comment merge fake-server completions man help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 1 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        perfgate__subcmd__ab)
            opts="-h --suite --base-engine-cmd --base-engine-image --engine-cmd --engine-image --base-label --label --max-launches --plan --max-minutes --order --seed --dry-run --json --markdown --html --gate --fail-on --color --kind --github --repo --pr --sha --no-comment --no-check-run --no-summary --check-name --allow-fork --comment-author --fail-on-post-error --github-retries --github-retry-delay-ms --github-timeout-secs --runs-per-launch --shuffle-scenarios --no-cache-reset --models --port --output-dir --session --start-timeout --stop-grace --unresponsive-timeout --metrics-interval --no-telemetry --telemetry-interval --warmup-requests --tokenizer --dataset-path --request-timeout --scenario-timeout --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --suite)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --base-engine-cmd)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --base-engine-image)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --engine-cmd)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --engine-image)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --base-label)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --label)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-launches)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --plan)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-minutes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --order)
                    COMPREPLY=($(compgen -W "abba random" -- "${cur}"))
                    return 0
                    ;;
                --seed)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --json)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --markdown)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --html)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --gate)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --fail-on)
                    COMPREPLY=($(compgen -W "regression inconclusive never" -- "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --kind)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --repo)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --pr)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sha)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --check-name)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --comment-author)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --github-retries)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --github-retry-delay-ms)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --github-timeout-secs)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --runs-per-launch)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --models)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --port)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --session)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --start-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --stop-grace)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --unresponsive-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --metrics-interval)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --telemetry-interval)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --warmup-requests)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tokenizer)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dataset-path)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --request-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --scenario-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        perfgate__subcmd__baseline)
            opts="-h --help record show schema noise calibrate promote help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        perfgate__subcmd__baseline__subcmd__calibrate)
            opts="-o -h --output --runs-from --engine --engine-version --image --install --preset --hardware --runner --date --notes --source --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --output)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --runs-from)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --engine)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --engine-version)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --image)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --install)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --preset)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --hardware)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --runner)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --date)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --notes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --source)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        perfgate__subcmd__baseline__subcmd__help)
            opts="record show schema noise calibrate promote help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        perfgate__subcmd__baseline__subcmd__help__subcmd__calibrate)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        perfgate__subcmd__baseline__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        perfgate__subcmd__baseline__subcmd__help__subcmd__noise)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        perfgate__subcmd__baseline__subcmd__help__subcmd__promote)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        perfgate__subcmd__baseline__subcmd__help__subcmd__record)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        perfgate__subcmd__baseline__subcmd__help__subcmd__schema)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        perfgate__subcmd__baseline__subcmd__help__subcmd__show)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        perfgate__subcmd__baseline__subcmd__noise)
            opts="-h --gate --json --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --gate)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        perfgate__subcmd__baseline__subcmd__promote)
            opts="-h --from --to --report --replace --append --force --date --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --from)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --to)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --report)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --date)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        perfgate__subcmd__baseline__subcmd__record)
            opts="-o -h --output --runs-from --engine --engine-version --image --install --preset --hardware --runner --date --notes --source --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --output)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --runs-from)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --engine)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --engine-version)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --image)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --install)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --preset)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --hardware)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --runner)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --date)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --notes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --source)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        perfgate__subcmd__baseline__subcmd__schema)
            opts="-h --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        perfgate__subcmd__baseline__subcmd__show)
            opts="-h --json --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        perfgate__subcmd__bisect)
            opts="-h --good --bad --revisions --repo --suite --baseline --engine-cmd --engine-image --prepare-cmd --scenarios --metrics --gate --max-minutes --max-pairs --runs-per-launch --shuffle-scenarios --no-cache-reset --models --port --output-dir --session --start-timeout --stop-grace --unresponsive-timeout --metrics-interval --no-telemetry --telemetry-interval --warmup-requests --tokenizer --dataset-path --request-timeout --scenario-timeout --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --good)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bad)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --revisions)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --repo)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --baseline)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --suite)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --engine-cmd)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --engine-image)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --prepare-cmd)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --scenarios)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --metrics)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --gate)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-minutes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-pairs)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --runs-per-launch)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --models)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --port)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --session)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --start-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --stop-grace)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --unresponsive-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --metrics-interval)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --telemetry-interval)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --warmup-requests)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tokenizer)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dataset-path)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --request-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --scenario-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        perfgate__subcmd__check)
            opts="-h --baseline --results --json --markdown --html --gate --fail-on --color --kind --github --repo --pr --sha --no-comment --no-check-run --no-summary --check-name --allow-fork --comment-author --fail-on-post-error --github-retries --github-retry-delay-ms --github-timeout-secs --dry-run --runs --engine-cmd --engine-image --base-url --rerun --max-reruns --confirm --plan --save-baseline --runs-per-launch --shuffle-scenarios --no-cache-reset --models --port --output-dir --session --start-timeout --stop-grace --unresponsive-timeout --metrics-interval --no-telemetry --telemetry-interval --warmup-requests --tokenizer --dataset-path --request-timeout --scenario-timeout --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --baseline)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --results)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --json)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --markdown)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --html)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --gate)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --fail-on)
                    COMPREPLY=($(compgen -W "regression inconclusive never" -- "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --kind)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --repo)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --pr)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sha)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --check-name)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --comment-author)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --github-retries)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --github-retry-delay-ms)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --github-timeout-secs)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --runs)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --engine-cmd)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --engine-image)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --base-url)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rerun)
                    COMPREPLY=($(compgen -W "inconclusive" -- "${cur}"))
                    return 0
                    ;;
                --max-reruns)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --confirm)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --plan)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --save-baseline)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --runs-per-launch)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --models)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --port)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --session)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --start-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --stop-grace)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --unresponsive-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --metrics-interval)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --telemetry-interval)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --warmup-requests)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tokenizer)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dataset-path)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --request-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --scenario-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        perfgate__subcmd__comment)
            opts="-h --report --markdown --html-url --kind --fail-on --repo --pr --sha --no-comment --no-check-run --no-summary --check-name --allow-fork --comment-author --fail-on-post-error --github-retries --github-retry-delay-ms --github-timeout-secs --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --report)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --markdown)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --html-url)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kind)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --fail-on)
                    COMPREPLY=($(compgen -W "regression inconclusive never" -- "${cur}"))
                    return 0
                    ;;
                --repo)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --pr)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sha)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --check-name)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --comment-author)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --github-retries)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --github-retry-delay-ms)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --github-timeout-secs)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        perfgate__subcmd__compare)
            opts="-h --map --markdown --html --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --map)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --html)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        perfgate__subcmd__completions)
            opts="-h --dir --help bash elvish fish powershell zsh"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        perfgate__subcmd__fake__subcmd__server)
            opts="-h --port --ttft-ms --itl-ms --tokens-per-chunk --no-usage --fault --fault-every --model --api --max-model-len --chat-template-tokens --lora-modules --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --port)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ttft-ms)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --itl-ms)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tokens-per-chunk)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --fault)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --fault-every)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --model)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --api)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-model-len)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --chat-template-tokens)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --lora-modules)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        perfgate__subcmd__help)
            opts="run import baseline check ab bisect plan compare report history comment merge fake-server completions man help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        perfgate__subcmd__help__subcmd__ab)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        perfgate__subcmd__help__subcmd__baseline)
            opts="record show schema noise calibrate promote"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        perfgate__subcmd__help__subcmd__baseline__subcmd__calibrate)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        perfgate__subcmd__help__subcmd__baseline__subcmd__noise)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        perfgate__subcmd__help__subcmd__baseline__subcmd__promote)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        perfgate__subcmd__help__subcmd__baseline__subcmd__record)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        perfgate__subcmd__help__subcmd__baseline__subcmd__schema)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        perfgate__subcmd__help__subcmd__baseline__subcmd__show)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        perfgate__subcmd__help__subcmd__bisect)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        perfgate__subcmd__help__subcmd__check)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        perfgate__subcmd__help__subcmd__comment)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        perfgate__subcmd__help__subcmd__compare)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        perfgate__subcmd__help__subcmd__completions)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        perfgate__subcmd__help__subcmd__fake__subcmd__server)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        perfgate__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        perfgate__subcmd__help__subcmd__history)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        perfgate__subcmd__help__subcmd__import)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        perfgate__subcmd__help__subcmd__man)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        perfgate__subcmd__help__subcmd__merge)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        perfgate__subcmd__help__subcmd__plan)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        perfgate__subcmd__help__subcmd__report)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        perfgate__subcmd__help__subcmd__run)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        perfgate__subcmd__history)
            opts="-h --metric --model --html --window --gate --all --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --metric)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --model)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --html)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --window)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --gate)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        perfgate__subcmd__import)
            opts="-o -q -h --output --model --engine --engine-version --dataset-name --num-prompts --random-input-len --random-output-len --random-range-ratio --range-convention --keep-going --quiet --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --output)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --model)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --engine)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --engine-version)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dataset-name)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --num-prompts)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --random-input-len)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --random-output-len)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --random-range-ratio)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --range-convention)
                    COMPREPLY=($(compgen -W "vllm sglang" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        perfgate__subcmd__man)
            opts="-h --dir --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        perfgate__subcmd__merge)
            opts="-o -h --output --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --output)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        perfgate__subcmd__plan)
            opts="-h --gate --delta-pct --alpha --power --startup-s --launches-tsv --max-runs-per-launch --max-launches --compare-launches --compare-pairs --compare-runs-per-launch --json --save --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --gate)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --delta-pct)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --alpha)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --power)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --startup-s)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --launches-tsv)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-runs-per-launch)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-launches)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --compare-launches)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --compare-pairs)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --compare-runs-per-launch)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --save)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        perfgate__subcmd__report)
            opts="-h --html --report --baseline --results --engine-metrics --title --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --html)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --report)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --baseline)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --results)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --engine-metrics)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --title)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        perfgate__subcmd__run)
            opts="-h --base-url --host --port --endpoint --backend --model --served-model-name --tokenizer --dataset-name --dataset-path --num-prompts --duration-s --random-input-len --random-output-len --random-range-ratio --random-prefix-len --range-convention --sharegpt-output-len --prefix-repetition-prefix-len --prefix-repetition-suffix-len --prefix-repetition-num-prefixes --prefix-repetition-output-len --custom-output-len --custom-skip-chat-template --spec-bench-output-len --spec-bench-category --no-oversample --timed-trace-sec-multiplier --timed-trace-chunk-hash-size --self-timed --request-rate --burstiness --ramp-up-strategy --ramp-up-start-rps --ramp-up-end-rps --max-concurrency --num-warmups --seed --ignore-eos --temperature --top-p --top-k --min-p --frequency-penalty --presence-penalty --repetition-penalty --extra-body --header --metadata --ready-check-timeout-sec --percentile-metrics --metric-percentiles --goodput --save-result --append-result --label --input-len --output-len --request-id-prefix --lora-modules --lora-assignment --trace --multi-turn --max-turns --trust-remote-code --tokenizer-mode --plot-timeline --timeline-itl-thresholds --plot-dataset-stats --result-dir --result-filename --save-detailed --save-detailed-format --request-timeout --no-keep-alive --retokenize --no-progress --no-telemetry --telemetry-interval --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --base-url)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --host)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --port)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --endpoint)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --backend)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --model)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --served-model-name)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tokenizer)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dataset-name)
                    COMPREPLY=($(compgen -W "random sharegpt fixed jsonl prefix_repetition custom spec_bench burstgpt timed_trace" -- "${cur}"))
                    return 0
                    ;;
                --dataset-path)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --num-prompts)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --duration-s)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --random-input-len)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --random-output-len)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --random-range-ratio)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --random-prefix-len)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --range-convention)
                    COMPREPLY=($(compgen -W "vllm sglang" -- "${cur}"))
                    return 0
                    ;;
                --sharegpt-output-len)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --prefix-repetition-prefix-len)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --prefix-repetition-suffix-len)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --prefix-repetition-num-prefixes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --prefix-repetition-output-len)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --custom-output-len)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --spec-bench-output-len)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --spec-bench-category)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --timed-trace-sec-multiplier)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --timed-trace-chunk-hash-size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --request-rate)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --burstiness)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ramp-up-strategy)
                    COMPREPLY=($(compgen -W "linear exponential" -- "${cur}"))
                    return 0
                    ;;
                --ramp-up-start-rps)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ramp-up-end-rps)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-concurrency)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --num-warmups)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --seed)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ignore-eos)
                    COMPREPLY=($(compgen -W "true false" -- "${cur}"))
                    return 0
                    ;;
                --temperature)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --top-p)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --top-k)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --min-p)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --frequency-penalty)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --presence-penalty)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --repetition-penalty)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --extra-body)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --header)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --metadata)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ready-check-timeout-sec)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --percentile-metrics)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --metric-percentiles)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --goodput)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --label)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --input-len)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output-len)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --request-id-prefix)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --lora-modules)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --lora-assignment)
                    COMPREPLY=($(compgen -W "random round-robin" -- "${cur}"))
                    return 0
                    ;;
                --trace)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-turns)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tokenizer-mode)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --timeline-itl-thresholds)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --result-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --result-filename)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --save-detailed-format)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --request-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --telemetry-interval)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
    esac
}

if [[ "${BASH_VERSINFO[0]}" -eq 4 && "${BASH_VERSINFO[1]}" -ge 4 || "${BASH_VERSINFO[0]}" -gt 4 ]]; then
    complete -F _perfgate -o nosort -o bashdefault -o default perfgate
else
    complete -F _perfgate -o bashdefault -o default perfgate
fi
