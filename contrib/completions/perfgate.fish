# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_perfgate_global_optspecs
    string join \n h/help V/version
end

function __fish_perfgate_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_perfgate_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_perfgate_using_subcommand
    set -l cmd (__fish_perfgate_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c perfgate -n "__fish_perfgate_needs_command" -s h -l help -d 'Print help'
complete -c perfgate -n "__fish_perfgate_needs_command" -s V -l version -d 'Print version'
complete -c perfgate -n "__fish_perfgate_needs_command" -f -a "run" -d 'Benchmark one scenario against a running OpenAI-compatible server (like `vllm bench serve`)'
complete -c perfgate -n "__fish_perfgate_needs_command" -f -a "import" -d 'Import benchmark results (vLLM/SGLang/LMDeploy logs, JSON, JSONL, CSV) as JSON Lines records'
complete -c perfgate -n "__fish_perfgate_needs_command" -f -a "baseline" -d 'Record, show or validate baseline files'
complete -c perfgate -n "__fish_perfgate_needs_command" -f -a "check" -d 'Gate results against a baseline with statistics; exit 1 on a regression'
complete -c perfgate -n "__fish_perfgate_needs_command" -f -a "ab" -d 'A/B on this runner: the base and the candidate engine launched in pairs, paired statistics after each pair until decided; exit 1 on a regression'
complete -c perfgate -n "__fish_perfgate_needs_command" -f -a "bisect" -d 'Find the revision that made a regression: `ab` comparisons between revisions, bisected; exit 0 when a culprit is named, 1 when none is'
complete -c perfgate -n "__fish_perfgate_needs_command" -f -a "plan" -d 'The design that reaches a verdict for the fewest engine-minutes: per row the noise between sessions, launches and runs (variance components) and the cost of each level, then the launches and runs per launch (`check`) or pairs (`ab`) that detect a change of δ at the gate\'s level with the power asked for; `--save` writes them for `--plan`'
complete -c perfgate -n "__fish_perfgate_needs_command" -f -a "compare" -d 'Compare baselines side by side (e.g. SGLang vs vLLM); `--html` for the plots'
complete -c perfgate -n "__fish_perfgate_needs_command" -f -a "report" -d 'Write the sign-off page (self-contained HTML with plots) from a check report or baselines'
complete -c perfgate -n "__fish_perfgate_needs_command" -f -a "history" -d 'Follow metrics across baselines (releases) and flag change points'
complete -c perfgate -n "__fish_perfgate_needs_command" -f -a "comment" -d 'Post a check report to GitHub: sticky PR comment, check run, job summary'
complete -c perfgate -n "__fish_perfgate_needs_command" -f -a "merge" -d 'Merge per-model check reports (from a matrix) into one report'
complete -c perfgate -n "__fish_perfgate_needs_command" -f -a "fake-server" -d 'Serve a fake OpenAI streaming API on 127.0.0.1 (for demos and benchmarks); prints its URL'
complete -c perfgate -n "__fish_perfgate_needs_command" -f -a "completions" -d 'Print a shell completion script to standard output (or write all of them to --dir)'
complete -c perfgate -n "__fish_perfgate_needs_command" -f -a "man" -d 'Print the man page (roff) to standard output (or write one page per command to --dir)'
complete -c perfgate -n "__fish_perfgate_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l base-url -d 'Server base URL (default: http://HOST:PORT)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l host -d 'Server host, when --base-url is not given' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l port -d 'Server port, when --base-url is not given' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l endpoint -d 'API endpoint: /v1/completions or /v1/chat/completions (the streaming APIs perfgate measures)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l backend -d 'Backend label recorded in the result (vLLM\'s `backend`)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l model -d 'Model name (recorded as `model` / `model_id`); default: the first model the server lists at /v1/models' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l served-model-name -d 'The `model` field sent to the server, when it differs from --model' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l tokenizer -d 'A tokenizer.json file or a directory holding one; or `server` to use the server\'s /tokenize and /detokenize. Defaults to --model' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l dataset-name -d 'Dataset: random, sharegpt, fixed, jsonl, prefix_repetition or custom' -r -f -a "random\t'Random tokens of exact lengths'
sharegpt\t'ShareGPT conversations (`--dataset-path`)'
fixed\t'One random prompt, repeated'
jsonl\t'`{"prompt", "output_len"}` per line (`--dataset-path`)'
prefix_repetition\t'Shared prefixes with unique suffixes (prefix caching)'
custom\t'vLLM\'s custom JSONL: `{"prompt"}` per line, output length from --custom-output-len'
spec_bench\t'Spec-Bench\'s `question.jsonl` (`--dataset-path`): each question\'s first turn, output length from --spec-bench-output-len, optionally one --spec-bench-category'
burstgpt\t'BurstGPT\'s CSV (`--dataset-path`): random prompts of its GPT-4 rows\' request and response token counts'
timed_trace\t'vLLM\'s spelling of a timed trace (`--dataset-path`): as `--trace`, with vLLM\'s `--timed-trace-sec-multiplier`'"
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l dataset-path -d 'Dataset file (sharegpt JSON; jsonl of {prompt, output_len}; custom: jsonl of {prompt})' -r -F
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l num-prompts -d 'Number of prompts to send (`-1`: every prompt of a custom or spec_bench file, as vLLM)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l duration-s -d 'Time budget in seconds: issue requests, cycling through the --num-prompts prompts, until it has passed, then let those in flight finish (perfgate\'s own; vLLM has none). Needs --max-concurrency or a finite --request-rate' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l random-input-len -d 'Prompt length in tokens (random, fixed)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l random-output-len -d 'Output length in tokens (random, fixed)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l random-range-ratio -d 'Length spread; read per --range-convention' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l random-prefix-len -d 'Tokens of a shared random prefix before every random prompt (added to its length)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l range-convention -d 'vllm: lengths in [L(1−r), L(1+r)]; sglang (and LMDeploy): [max(rL, 1), L]' -r -f -a "vllm\t''
sglang\t''"
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l sharegpt-output-len -d 'Output length for sharegpt prompts (default: the reference answer\'s length)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l prefix-repetition-prefix-len -d 'prefix_repetition: tokens of each shared prefix' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l prefix-repetition-suffix-len -d 'prefix_repetition: tokens of each prompt\'s unique suffix' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l prefix-repetition-num-prefixes -d 'prefix_repetition: how many distinct prefixes the prompts share' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l prefix-repetition-output-len -d 'prefix_repetition: output length in tokens' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l custom-output-len -d 'custom: output length in tokens of every prompt' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l spec-bench-output-len -d 'spec_bench: output length in tokens of every prompt' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l spec-bench-category -d 'spec_bench: read only the questions of this category (e.g. `summarization`)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l timed-trace-sec-multiplier -d 'timed_trace: seconds per unit of the trace\'s timestamps (vLLM\'s default 1; Mooncake\'s traces are in milliseconds: 0.001)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l timed-trace-chunk-hash-size -d 'timed_trace: vLLM\'s tokens per hash id, for rebuilding shared prefixes. Accepted and ignored (with a note): perfgate sends each request a prompt of its own' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l request-rate -d 'Requests per second (`inf`: all at once; otherwise gamma/Poisson arrivals)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l burstiness -d 'Gamma shape of the arrival gaps (1 = Poisson; lower is burstier)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l ramp-up-strategy -d 'Ramp the request rate up over the run from --ramp-up-start-rps to --ramp-up-end-rps (instead of --request-rate)' -r -f -a "linear\t''
exponential\t''"
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l ramp-up-start-rps -d 'Request rate of the first request under --ramp-up-strategy' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l ramp-up-end-rps -d 'Request rate of the last request under --ramp-up-strategy' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l max-concurrency -d 'At most this many requests in flight' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l num-warmups -d 'Requests sent and discarded before the measured run' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l seed -d 'Seed of the dataset and the arrival schedule' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l ignore-eos -d 'Ask the server to ignore EOS (default: on for random and fixed prompts, off otherwise)' -r -f -a "true\t''
false\t''"
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l temperature -d 'Sampling temperature sent with every request (default: not sent, the server decides, as vLLM 0.33\'s client; `--temperature 0` for greedy)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l top-p -d 'Sampling `top_p` sent with every request (default: not sent)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l top-k -d 'Sampling `top_k` sent with every request (default: not sent)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l min-p -d 'Sampling `min_p` sent with every request (default: not sent)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l frequency-penalty -d '`frequency_penalty` sent with every request (default: not sent)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l presence-penalty -d '`presence_penalty` sent with every request (default: not sent)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l repetition-penalty -d '`repetition_penalty` sent with every request (default: not sent)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l extra-body -d 'A JSON object merged into every request body, e.g. \'{"cache_prompt": false}\'' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l header -d 'Extra HTTP headers as KEY=VALUE (repeatable; several after one flag)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l metadata -d 'KEY=VALUE pairs written into the result JSON and the record (repeatable; several after one flag)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l ready-check-timeout-sec -d 'Wait up to this many seconds for the server to answer before the run (0: do not wait; vLLM 0.33\'s default). perfgate waits 600 s by default and says so' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l percentile-metrics -d 'Comma-separated metrics to report statistics for: ttft, tpot, itl, e2el' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l metric-percentiles -d 'Comma-separated percentiles, e.g. 50,90,99' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l goodput -d 'Service-level objectives for goodput, e.g. `--goodput ttft:500 tpot:50`' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l label -d 'The result\'s label: the `label` key of the result JSON and the prefix of its default file name (default: `--backend`)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l input-len -d 'General input length: sets `--random-input-len` (as vLLM\'s `--input-len`)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l output-len -d 'General output length: sets `--random-output-len`, `--sharegpt-output-len`, `--custom-output-len` and `--prefix-repetition-output-len` (as vLLM\'s `--output-len`)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l request-id-prefix -d 'Each request\'s `x-request-id` header: this prefix and the request\'s index (default: `bench-` and 8 random hex digits and `-`, as vLLM)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l lora-modules -d 'LoRA adapters the server was started with: each request names one of them as its `model` (vLLM\'s flag; several after one flag)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l lora-assignment -d 'How requests are spread over --lora-modules: random (seeded by --seed) or round-robin' -r -f -a "random\t'Each request takes an adapter drawn at random (seeded)'
round-robin\t'Request i takes adapter i mod n'"
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l trace -d 'Replay a timed trace instead of the dataset: JSON Lines of {timestamp (ms), input_length, output_length}, as Mooncake\'s traces; each request is sent at its time with a random prompt of its length (see docs/workloads.md)' -r -F
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l max-turns -d '--multi-turn: at most this many turns of each conversation' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l tokenizer-mode -d 'Accepted for vLLM compatibility and ignored (with a note): perfgate reads the tokenizer\'s `tokenizer.json` (or the server\'s `/tokenize`) whatever the mode' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l timeline-itl-thresholds -d 'With `--plot-timeline` in vLLM: the ITL colour thresholds. Accepted and ignored' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l result-dir -d 'Directory for the result file (default: current directory)' -r -F
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l result-filename -d 'Result file name (default: BACKEND-RATEqps[-concurrencyN]-MODEL-DATE.json)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l save-detailed-format -d 'Where `--save-detailed` puts the per-request data, comma-separated: `json` (vLLM\'s arrays in the result JSON), `jsonl` and `csv` (one row per request, in the files RESULT.requests.jsonl and RESULT.requests.csv beside the result file). Implies `--save-detailed`; the files are written even without `--save-result`' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l request-timeout -d 'Per-request timeout in seconds (default: none)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l telemetry-interval -d 'Seconds between telemetry samples' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l custom-skip-chat-template -d 'custom: accepted for vLLM compatibility (vLLM 0.33 spells it `--skip-chat-template`); perfgate never applies a chat template client-side (the chat endpoint applies the server\'s)'
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l no-oversample -d 'custom, jsonl, sharegpt, spec_bench, burstgpt: when the file has fewer prompts than --num-prompts, run those instead of repeating them'
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l self-timed -d 'timed_trace: vLLM\'s switch for sending at the trace\'s own times. Accepted: perfgate always sends a trace\'s requests at their times'
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l save-result -d 'Write the result JSON'
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l append-result -d 'Append the result JSON to the file (a new line) instead of replacing it; implies `--save-result`'
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l multi-turn -d 'Play the ShareGPT dataset\'s conversations turn by turn on the chat endpoint: each turn is sent after the previous answer, with the conversation so far (--num-prompts counts conversations; see docs/workloads.md)'
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l trust-remote-code -d 'Accepted for vLLM compatibility and ignored (with a note): perfgate reads tokenizer.json files and never runs a model\'s code'
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l plot-timeline -d 'Accepted for vLLM compatibility and ignored (with a note): perfgate draws no request timeline; `--save-detailed-format csv` writes each request\'s times for one'
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l plot-dataset-stats -d 'Accepted for vLLM compatibility and ignored (with a note): the result JSON\'s `input_lens` / `output_lens` (`--save-detailed`) hold the dataset\'s lengths'
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l save-detailed -d 'Add per-request arrays (input_lens, output_lens, ttfts, itls, latencies, queue_times, generated_texts, errors, …)'
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l no-keep-alive -d 'A fresh connection per request (as vLLM\'s and SGLang\'s clients do) instead of reusing connections opened before the run. Needed for llama.cpp\'s server, which announces keep-alive but closes the connection after a streamed response'
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l retokenize -d 'Re-tokenize every generated text and report total_output_tokens_retokenized'
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l no-progress -d 'No progress bar'
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -l no-telemetry -d 'No telemetry beside the run. On by default: `nvidia-smi` when on PATH, the CPU\'s load, clocks and steal time, and the server\'s /metrics gauges, sampled on a thread of their own, plus a 0.2 s calibration loop timed before the run; written under the result\'s `telemetry` key'
complete -c perfgate -n "__fish_perfgate_using_subcommand run" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c perfgate -n "__fish_perfgate_using_subcommand import" -s o -l output -d 'Write the records here instead of standard output' -r -F
complete -c perfgate -n "__fish_perfgate_using_subcommand import" -l model -d 'The model, for files that do not name it' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand import" -l engine -d 'The serving engine (`vllm`, `sglang`, `lmdeploy`, …), when the file does not say' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand import" -l engine-version -d 'The engine version (e.g. `v0.10.1`), when the file does not say' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand import" -l dataset-name -d 'The dataset (`random`, `sharegpt`, …), for results whose arguments are not in the file' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand import" -l num-prompts -d 'The number of prompts, for results whose arguments are not in the file' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand import" -l random-input-len -d 'The prompt length, for random-dataset results whose arguments are not in the file' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand import" -l random-output-len -d 'The output length, for random-dataset results whose arguments are not in the file' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand import" -l random-range-ratio -d 'The length spread, for random-dataset results whose arguments are not in the file' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand import" -l range-convention -d 'How `--random-range-ratio` was read by the tool that ran (default: from the format)' -r -f -a "vllm\t''
sglang\t''"
complete -c perfgate -n "__fish_perfgate_using_subcommand import" -l keep-going -d 'Import every result that can be read and list the others (file:line: why) instead of refusing a file at its first bad result; exit 0 when none was bad, 1 when some were (the others are written), 2 when none could be read'
complete -c perfgate -n "__fish_perfgate_using_subcommand import" -s q -l quiet -d 'Print nothing but errors'
complete -c perfgate -n "__fish_perfgate_using_subcommand import" -s h -l help -d 'Print help'
complete -c perfgate -n "__fish_perfgate_using_subcommand baseline; and not __fish_seen_subcommand_from record show schema noise calibrate promote help" -s h -l help -d 'Print help'
complete -c perfgate -n "__fish_perfgate_using_subcommand baseline; and not __fish_seen_subcommand_from record show schema noise calibrate promote help" -f -a "record" -d 'Build a baseline TOML file from JSON Lines records (`perfgate import`/`perfgate run`)'
complete -c perfgate -n "__fish_perfgate_using_subcommand baseline; and not __fish_seen_subcommand_from record show schema noise calibrate promote help" -f -a "show" -d 'Show a baseline: a summary table, or its records as JSON Lines with `--json`'
complete -c perfgate -n "__fish_perfgate_using_subcommand baseline; and not __fish_seen_subcommand_from record show schema noise calibrate promote help" -f -a "schema" -d 'Print the JSON Schema of the baseline file format'
complete -c perfgate -n "__fish_perfgate_using_subcommand baseline; and not __fish_seen_subcommand_from record show schema noise calibrate promote help" -f -a "noise" -d 'Print each row\'s noise as the gate estimates it: the standard deviations (log scale, ≈ relative) between sessions, between launches of a session and between runs of a launch, with their degrees of freedom, the value the gate uses (moderated toward the metric\'s other rows), and how many launches of a new session an unchanged engine would likely need to pass; then each model\'s engine-wide series'
complete -c perfgate -n "__fish_perfgate_using_subcommand baseline; and not __fish_seen_subcommand_from record show schema noise calibrate promote help" -f -a "calibrate" -d 'Calibrate: build (or extend, with `--runs-from`) a baseline from A/A launches of one engine recorded over ≥ 2 sessions (e.g. two `perfgate check --runs N` invocations), so that the gate measures the between-session variance instead of assuming it; prints the noise profile. Refuses records of fewer than 2 sessions'
complete -c perfgate -n "__fish_perfgate_using_subcommand baseline; and not __fish_seen_subcommand_from record show schema noise calibrate promote help" -f -a "promote" -d 'Make checked results the new baseline, with provenance (source report, commit, date); refuses results whose check failed unless `--force`, and prints what changed'
complete -c perfgate -n "__fish_perfgate_using_subcommand baseline; and not __fish_seen_subcommand_from record show schema noise calibrate promote help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c perfgate -n "__fish_perfgate_using_subcommand baseline; and __fish_seen_subcommand_from record" -s o -l output -d 'The baseline file to write' -r -F
complete -c perfgate -n "__fish_perfgate_using_subcommand baseline; and __fish_seen_subcommand_from record" -l runs-from -d 'Start from this baseline: keep its engine, provenance and runs, and append the new records as further runs' -r -F
complete -c perfgate -n "__fish_perfgate_using_subcommand baseline; and __fish_seen_subcommand_from record" -l engine -d 'Engine name (default: the records\' engine)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand baseline; and __fish_seen_subcommand_from record" -l engine-version -d 'Engine version (default: the records\' engine version)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand baseline; and __fish_seen_subcommand_from record" -l image -d 'Container image the engine ran in' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand baseline; and __fish_seen_subcommand_from record" -l install -d 'How the engine was installed when not from an image' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand baseline; and __fish_seen_subcommand_from record" -l preset -d 'Launch preset for `[engine.launch]` (`vllm-docker`, `sglang-docker`, `lmdeploy`, …)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand baseline; and __fish_seen_subcommand_from record" -l hardware -d 'Hardware the runs were measured on' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand baseline; and __fish_seen_subcommand_from record" -l runner -d 'Who or what ran the benchmark (a CI runner, a person)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand baseline; and __fish_seen_subcommand_from record" -l date -d 'Date of the measurements (free text, e.g. `2025-08-20`)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand baseline; and __fish_seen_subcommand_from record" -l notes -d 'A note for reviewers' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand baseline; and __fish_seen_subcommand_from record" -l source -d 'Source files to list in the provenance instead of those named by the records' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand baseline; and __fish_seen_subcommand_from record" -s h -l help -d 'Print help'
complete -c perfgate -n "__fish_perfgate_using_subcommand baseline; and __fish_seen_subcommand_from show" -l json -d 'Print the records (one JSON object per line) instead of a table'
complete -c perfgate -n "__fish_perfgate_using_subcommand baseline; and __fish_seen_subcommand_from show" -s h -l help -d 'Print help'
complete -c perfgate -n "__fish_perfgate_using_subcommand baseline; and __fish_seen_subcommand_from schema" -s h -l help -d 'Print help'
complete -c perfgate -n "__fish_perfgate_using_subcommand baseline; and __fish_seen_subcommand_from noise" -l gate -d 'Gate settings on top of the baseline\'s `[gate]` table (tolerances, priors)' -r -F
complete -c perfgate -n "__fish_perfgate_using_subcommand baseline; and __fish_seen_subcommand_from noise" -l json -d 'Print JSON Lines (one object per row) instead of a table'
complete -c perfgate -n "__fish_perfgate_using_subcommand baseline; and __fish_seen_subcommand_from noise" -s h -l help -d 'Print help'
complete -c perfgate -n "__fish_perfgate_using_subcommand baseline; and __fish_seen_subcommand_from calibrate" -s o -l output -d 'The baseline file to write' -r -F
complete -c perfgate -n "__fish_perfgate_using_subcommand baseline; and __fish_seen_subcommand_from calibrate" -l runs-from -d 'Start from this baseline: keep its engine, provenance and runs, and append the new records as further runs' -r -F
complete -c perfgate -n "__fish_perfgate_using_subcommand baseline; and __fish_seen_subcommand_from calibrate" -l engine -d 'Engine name (default: the records\' engine)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand baseline; and __fish_seen_subcommand_from calibrate" -l engine-version -d 'Engine version (default: the records\' engine version)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand baseline; and __fish_seen_subcommand_from calibrate" -l image -d 'Container image the engine ran in' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand baseline; and __fish_seen_subcommand_from calibrate" -l install -d 'How the engine was installed when not from an image' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand baseline; and __fish_seen_subcommand_from calibrate" -l preset -d 'Launch preset for `[engine.launch]` (`vllm-docker`, `sglang-docker`, `lmdeploy`, …)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand baseline; and __fish_seen_subcommand_from calibrate" -l hardware -d 'Hardware the runs were measured on' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand baseline; and __fish_seen_subcommand_from calibrate" -l runner -d 'Who or what ran the benchmark (a CI runner, a person)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand baseline; and __fish_seen_subcommand_from calibrate" -l date -d 'Date of the measurements (free text, e.g. `2025-08-20`)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand baseline; and __fish_seen_subcommand_from calibrate" -l notes -d 'A note for reviewers' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand baseline; and __fish_seen_subcommand_from calibrate" -l source -d 'Source files to list in the provenance instead of those named by the records' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand baseline; and __fish_seen_subcommand_from calibrate" -s h -l help -d 'Print help'
complete -c perfgate -n "__fish_perfgate_using_subcommand baseline; and __fish_seen_subcommand_from promote" -l from -d 'The results to promote: JSON Lines records (e.g. `perfgate-out/results.jsonl`)' -r -F
complete -c perfgate -n "__fish_perfgate_using_subcommand baseline; and __fish_seen_subcommand_from promote" -l to -d 'The baseline file to write' -r -F
complete -c perfgate -n "__fish_perfgate_using_subcommand baseline; and __fish_seen_subcommand_from promote" -l report -d 'The check report of these results (default: `report.json` next to them)' -r -F
complete -c perfgate -n "__fish_perfgate_using_subcommand baseline; and __fish_seen_subcommand_from promote" -l date -d 'Date of the measurements in the provenance (default: today, UTC)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand baseline; and __fish_seen_subcommand_from promote" -l replace -d 'Replace the runs of an existing baseline (keeping its engine, launch and model settings)'
complete -c perfgate -n "__fish_perfgate_using_subcommand baseline; and __fish_seen_subcommand_from promote" -l append -d 'Add the results as further runs of an existing baseline'
complete -c perfgate -n "__fish_perfgate_using_subcommand baseline; and __fish_seen_subcommand_from promote" -l force -d 'Promote even when the check failed or errored, no check report is found, or the report did not gate these exact bytes (their SHA-256)'
complete -c perfgate -n "__fish_perfgate_using_subcommand baseline; and __fish_seen_subcommand_from promote" -s h -l help -d 'Print help'
complete -c perfgate -n "__fish_perfgate_using_subcommand baseline; and __fish_seen_subcommand_from help" -f -a "record" -d 'Build a baseline TOML file from JSON Lines records (`perfgate import`/`perfgate run`)'
complete -c perfgate -n "__fish_perfgate_using_subcommand baseline; and __fish_seen_subcommand_from help" -f -a "show" -d 'Show a baseline: a summary table, or its records as JSON Lines with `--json`'
complete -c perfgate -n "__fish_perfgate_using_subcommand baseline; and __fish_seen_subcommand_from help" -f -a "schema" -d 'Print the JSON Schema of the baseline file format'
complete -c perfgate -n "__fish_perfgate_using_subcommand baseline; and __fish_seen_subcommand_from help" -f -a "noise" -d 'Print each row\'s noise as the gate estimates it: the standard deviations (log scale, ≈ relative) between sessions, between launches of a session and between runs of a launch, with their degrees of freedom, the value the gate uses (moderated toward the metric\'s other rows), and how many launches of a new session an unchanged engine would likely need to pass; then each model\'s engine-wide series'
complete -c perfgate -n "__fish_perfgate_using_subcommand baseline; and __fish_seen_subcommand_from help" -f -a "calibrate" -d 'Calibrate: build (or extend, with `--runs-from`) a baseline from A/A launches of one engine recorded over ≥ 2 sessions (e.g. two `perfgate check --runs N` invocations), so that the gate measures the between-session variance instead of assuming it; prints the noise profile. Refuses records of fewer than 2 sessions'
complete -c perfgate -n "__fish_perfgate_using_subcommand baseline; and __fish_seen_subcommand_from help" -f -a "promote" -d 'Make checked results the new baseline, with provenance (source report, commit, date); refuses results whose check failed unless `--force`, and prints what changed'
complete -c perfgate -n "__fish_perfgate_using_subcommand baseline; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c perfgate -n "__fish_perfgate_using_subcommand check" -l baseline -d 'The baseline: a baseline TOML file (or JSON Lines records)' -r -F
complete -c perfgate -n "__fish_perfgate_using_subcommand check" -l results -d 'Results to gate: JSON Lines records from `perfgate run`/`import` (one or more files)' -r -F
complete -c perfgate -n "__fish_perfgate_using_subcommand check" -l json -d 'Also write the report as JSON to this file (`-` for stdout, instead of the table)' -r -F
complete -c perfgate -n "__fish_perfgate_using_subcommand check" -l markdown -d 'Also write the report as markdown (PR comment, job summary) to this file' -r -F
complete -c perfgate -n "__fish_perfgate_using_subcommand check" -l html -d 'Also write the sign-off page (self-contained HTML with plots) to this file' -r -F
complete -c perfgate -n "__fish_perfgate_using_subcommand check" -l gate -d 'Gate settings (TOML) applied over the baseline\'s `[gate]` table' -r -F
complete -c perfgate -n "__fish_perfgate_using_subcommand check" -l fail-on -d 'Exit 1 on regressions only (default), also on inconclusive rows, or never' -r -f -a "regression\t'A regressed row exits 1, an error row 3; inconclusive rows exit 0'
inconclusive\t'Also an inconclusive row (or a scenario missing from the results) exits 1'
never\t'Always exit 0 once the report is out (errors and regressions only reported)'"
complete -c perfgate -n "__fish_perfgate_using_subcommand check" -l color -d 'Colour the terminal table' -r -f -a "auto\t'Colour when stdout is a terminal and NO_COLOR is unset'
always\t''
never\t''"
complete -c perfgate -n "__fish_perfgate_using_subcommand check" -l kind -d 'The report kind named in the hidden marker of the markdown (`<!-- perfgate:KIND -->`)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand check" -l repo -d 'Repository `OWNER/NAME` (default: $GITHUB_REPOSITORY)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand check" -l pr -d 'Pull request number (default: from the event payload)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand check" -l sha -d 'Commit the check run is attached to (default: the PR\'s head SHA from the event payload)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand check" -l check-name -d 'Check run name (default: `perfgate`, or `perfgate (KIND)` for other report kinds)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand check" -l comment-author -d 'The login whose comment holding the marker is updated (default: the token\'s identity, `GET /user`; `github-actions[bot]` for the workflow\'s own token). Comments by anyone else are never edited. Set it when posting with a GitHub App\'s token (`APP[bot]`)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand check" -l github-retries -d 'Retries for 5xx answers, rate limits and network errors' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand check" -l github-retry-delay-ms -d 'Delay before the first retry in milliseconds; doubles per retry, capped at 10 s' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand check" -l github-timeout-secs -d 'Timeout of one GitHub request, in seconds' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand check" -l runs -d 'Engine launches per model: each is a fresh engine, warmed up, then every scenario in the file\'s order, --runs-per-launch times (same dataset seeds). Records carry the launch id' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand check" -l engine-cmd -d 'Engine command template replacing the preset\'s (e.g. the engine this PR built). Placeholders: {model} {served_model_name} {tp} {port} {image} {container} {extra_args}' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand check" -l engine-image -d 'Container image replacing the file\'s (docker presets)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand check" -l base-url -d 'Do not launch anything: benchmark the server already at this URL' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand check" -l rerun -d 'Re-run scenarios with this verdict (with a fresh engine per model) after the first gate' -r -f -a "inconclusive\t'Scenarios whose verdict was inconclusive'"
complete -c perfgate -n "__fish_perfgate_using_subcommand check" -l max-reruns -d 'Most re-run rounds with --rerun' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand check" -l confirm -d 'When the gate FAILs, launch each model with a regressed test this many more times and decide again on all of the candidate\'s launches: the check FAILs only if that decision FAILs too (a row that regressed once is never passed). One disturbed launch is otherwise a FAIL the gate cannot tell from a regression; 0 turns confirmation off. With --results (nothing to launch) each model\'s last N launches are held back as the confirmation: the FAIL stands only if the decision without them FAILs too' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand check" -l plan -d 'Take --runs and --runs-per-launch from a plan\'s `[check]` (`perfgate plan --save`); flags given on the command line win, with a note' -r -F
complete -c perfgate -n "__fish_perfgate_using_subcommand check" -l save-baseline -d 'Also write the measured runs as a baseline file (the suite plus the numbers)' -r -F
complete -c perfgate -n "__fish_perfgate_using_subcommand check" -l runs-per-launch -d 'Runs of the suite inside one launch (they share the engine\'s state, so they count as one launch\'s runs, not as independent replicates)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand check" -l models -d 'Only these models (comma-separated names, or the part after the last `/`)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand check" -l port -d 'Port for the launched engine (default: the file\'s, else the preset\'s)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand check" -l output-dir -d 'Where results records, engine logs, engine metrics and the reports are written' -r -F
complete -c perfgate -n "__fish_perfgate_using_subcommand check" -l session -d 'The recording session the records belong to (default: a new one per invocation, named by its start time and process id). Give invocations of one sitting the same id: the gate treats launches of one session as sharing the machine\'s state of that time' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand check" -l start-timeout -d 'Seconds an engine may take to become ready (default: the file\'s, else the preset\'s)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand check" -l stop-grace -d 'Seconds between SIGTERM and SIGKILL when stopping an engine' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand check" -l unresponsive-timeout -d 'An engine whose /health fails this long during a scenario counts as hung' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand check" -l metrics-interval -d 'Seconds between /metrics samples during a scenario' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand check" -l telemetry-interval -d 'Seconds between telemetry samples' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand check" -l warmup-requests -d 'Warm-up after each launch: a discarded pass of every scenario\'s shape (its lengths and concurrency, prompts from another seed) before the measured runs. `auto`: per scenario, its max concurrency (or prompt count) requests, at most its prompt count; N: N requests per scenario; 0: no warm-up' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand check" -l tokenizer -d 'Tokenizer for prompt synthesis for every model (a tokenizer.json path, or `server`)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand check" -l dataset-path -d 'ShareGPT JSON for `sharegpt` scenarios' -r -F
complete -c perfgate -n "__fish_perfgate_using_subcommand check" -l request-timeout -d 'Per-request deadline in seconds (default: none; a hung engine is caught by the health watch)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand check" -l scenario-timeout -d 'Hard limit in seconds for one scenario run, after which it counts as an engine fault' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand check" -l github -d 'After gating, write the job summary and outputs and post the PR comment and check run (like `perfgate comment`)'
complete -c perfgate -n "__fish_perfgate_using_subcommand check" -l no-comment -d 'Do not post or update the PR comment'
complete -c perfgate -n "__fish_perfgate_using_subcommand check" -l no-check-run -d 'Do not create a check run'
complete -c perfgate -n "__fish_perfgate_using_subcommand check" -l no-summary -d 'Do not write the job summary or print annotations (another step already did)'
complete -c perfgate -n "__fish_perfgate_using_subcommand check" -l allow-fork -d 'Post even from a `pull_request` event whose head is a fork (the job ran untrusted code; prefer the `workflow_run` pattern)'
complete -c perfgate -n "__fish_perfgate_using_subcommand check" -l fail-on-post-error -d 'Exit 3 when posting to GitHub fails (default: warn; the exit code reflects the gate)'
complete -c perfgate -n "__fish_perfgate_using_subcommand check" -l dry-run -d 'Print every rendered launch command and scenario; run nothing'
complete -c perfgate -n "__fish_perfgate_using_subcommand check" -l shuffle-scenarios -d 'Run the scenarios of a launch in a reproducible shuffled order (the same for every model and side) instead of the file\'s order'
complete -c perfgate -n "__fish_perfgate_using_subcommand check" -l no-cache-reset -d 'Do not reset the engine\'s caches between scenarios (vLLM `POST /reset_prefix_cache`, SGLang `POST /flush_cache`, llama.cpp `"cache_prompt": false` in every request)'
complete -c perfgate -n "__fish_perfgate_using_subcommand check" -l no-telemetry -d 'No telemetry beside the scenarios. On by default: `nvidia-smi` when on PATH (clocks, power, temperature, throttle reasons), the CPU\'s load, clocks and steal time, and the engine\'s /metrics gauges, sampled on a thread of their own, plus a 0.2 s calibration loop timed before each scenario; summarised in each record\'s `telemetry` key'
complete -c perfgate -n "__fish_perfgate_using_subcommand check" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c perfgate -n "__fish_perfgate_using_subcommand ab" -l suite -d 'The suite: a suite or baseline TOML file (models, scenarios, engine preset, `[gate]`); its numbers, if any, are not used' -r -F
complete -c perfgate -n "__fish_perfgate_using_subcommand ab" -l base-engine-cmd -d 'The base arm\'s engine command template (e.g. main\'s build); default: the suite\'s' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand ab" -l base-engine-image -d 'The base arm\'s container image (docker presets)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand ab" -l engine-cmd -d 'The candidate arm\'s engine command template (e.g. the PR\'s build); default: the suite\'s' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand ab" -l engine-image -d 'The candidate arm\'s container image (docker presets)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand ab" -l base-label -d 'What the base arm is, for the reports (a git ref, an image); default: its image or command' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand ab" -l label -d 'What the candidate arm is, for the reports; default: its image or command' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand ab" -l max-launches -d 'Most launches of each arm per model (= pairs); the sequential test plans one look per pair, so a larger budget tests each look at a smaller share of alpha' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand ab" -l plan -d 'Take --max-launches and --runs-per-launch from a plan\'s `[ab]` (`perfgate plan --save`); flags given on the command line win, with a note' -r -F
complete -c perfgate -n "__fish_perfgate_using_subcommand ab" -l max-minutes -d 'Time budget for the whole comparison in minutes: no scenario starts once it is spent' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand ab" -l order -d 'The order of the arms within each pair' -r -f -a "abba\t'Base first in odd pairs, candidate first in even ones (A B, B A, A B, …)'
random\t'A reproducible coin per pair (`--seed`)'"
complete -c perfgate -n "__fish_perfgate_using_subcommand ab" -l seed -d 'Seed of `--order random`' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand ab" -l json -d 'Also write the report as JSON to this file (`-` for stdout, instead of the table); default: OUTPUT_DIR/report.json' -r -F
complete -c perfgate -n "__fish_perfgate_using_subcommand ab" -l markdown -d 'Also write the report as markdown to this file; default: OUTPUT_DIR/report.md' -r -F
complete -c perfgate -n "__fish_perfgate_using_subcommand ab" -l html -d 'Also write the sign-off page to this file; default: OUTPUT_DIR/report.html' -r -F
complete -c perfgate -n "__fish_perfgate_using_subcommand ab" -l gate -d 'Gate settings (TOML) applied over the suite\'s `[gate]` table' -r -F
complete -c perfgate -n "__fish_perfgate_using_subcommand ab" -l fail-on -d 'Exit 1 on regressions only (default), also on inconclusive rows, or never' -r -f -a "regression\t'A regressed row exits 1, an error row 3; inconclusive rows exit 0'
inconclusive\t'Also an inconclusive row (or a scenario missing from the results) exits 1'
never\t'Always exit 0 once the report is out (errors and regressions only reported)'"
complete -c perfgate -n "__fish_perfgate_using_subcommand ab" -l color -d 'Colour the terminal table' -r -f -a "auto\t'Colour when stdout is a terminal and NO_COLOR is unset'
always\t''
never\t''"
complete -c perfgate -n "__fish_perfgate_using_subcommand ab" -l kind -d 'The report kind named in the hidden marker of the markdown (`<!-- perfgate:KIND -->`)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand ab" -l repo -d 'Repository `OWNER/NAME` (default: $GITHUB_REPOSITORY)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand ab" -l pr -d 'Pull request number (default: from the event payload)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand ab" -l sha -d 'Commit the check run is attached to (default: the PR\'s head SHA from the event payload)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand ab" -l check-name -d 'Check run name (default: `perfgate`, or `perfgate (KIND)` for other report kinds)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand ab" -l comment-author -d 'The login whose comment holding the marker is updated (default: the token\'s identity, `GET /user`; `github-actions[bot]` for the workflow\'s own token). Comments by anyone else are never edited. Set it when posting with a GitHub App\'s token (`APP[bot]`)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand ab" -l github-retries -d 'Retries for 5xx answers, rate limits and network errors' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand ab" -l github-retry-delay-ms -d 'Delay before the first retry in milliseconds; doubles per retry, capped at 10 s' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand ab" -l github-timeout-secs -d 'Timeout of one GitHub request, in seconds' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand ab" -l runs-per-launch -d 'Runs of the suite inside one launch (they share the engine\'s state, so they count as one launch\'s runs, not as independent replicates)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand ab" -l models -d 'Only these models (comma-separated names, or the part after the last `/`)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand ab" -l port -d 'Port for the launched engine (default: the file\'s, else the preset\'s)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand ab" -l output-dir -d 'Where results records, engine logs, engine metrics and the reports are written' -r -F
complete -c perfgate -n "__fish_perfgate_using_subcommand ab" -l session -d 'The recording session the records belong to (default: a new one per invocation, named by its start time and process id). Give invocations of one sitting the same id: the gate treats launches of one session as sharing the machine\'s state of that time' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand ab" -l start-timeout -d 'Seconds an engine may take to become ready (default: the file\'s, else the preset\'s)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand ab" -l stop-grace -d 'Seconds between SIGTERM and SIGKILL when stopping an engine' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand ab" -l unresponsive-timeout -d 'An engine whose /health fails this long during a scenario counts as hung' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand ab" -l metrics-interval -d 'Seconds between /metrics samples during a scenario' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand ab" -l telemetry-interval -d 'Seconds between telemetry samples' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand ab" -l warmup-requests -d 'Warm-up after each launch: a discarded pass of every scenario\'s shape (its lengths and concurrency, prompts from another seed) before the measured runs. `auto`: per scenario, its max concurrency (or prompt count) requests, at most its prompt count; N: N requests per scenario; 0: no warm-up' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand ab" -l tokenizer -d 'Tokenizer for prompt synthesis for every model (a tokenizer.json path, or `server`)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand ab" -l dataset-path -d 'ShareGPT JSON for `sharegpt` scenarios' -r -F
complete -c perfgate -n "__fish_perfgate_using_subcommand ab" -l request-timeout -d 'Per-request deadline in seconds (default: none; a hung engine is caught by the health watch)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand ab" -l scenario-timeout -d 'Hard limit in seconds for one scenario run, after which it counts as an engine fault' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand ab" -l dry-run -d 'Print both arms\' launch commands and the scenarios; run nothing'
complete -c perfgate -n "__fish_perfgate_using_subcommand ab" -l github -d 'After gating, write the job summary and outputs and post the PR comment and check run (like `perfgate comment`)'
complete -c perfgate -n "__fish_perfgate_using_subcommand ab" -l no-comment -d 'Do not post or update the PR comment'
complete -c perfgate -n "__fish_perfgate_using_subcommand ab" -l no-check-run -d 'Do not create a check run'
complete -c perfgate -n "__fish_perfgate_using_subcommand ab" -l no-summary -d 'Do not write the job summary or print annotations (another step already did)'
complete -c perfgate -n "__fish_perfgate_using_subcommand ab" -l allow-fork -d 'Post even from a `pull_request` event whose head is a fork (the job ran untrusted code; prefer the `workflow_run` pattern)'
complete -c perfgate -n "__fish_perfgate_using_subcommand ab" -l fail-on-post-error -d 'Exit 3 when posting to GitHub fails (default: warn; the exit code reflects the gate)'
complete -c perfgate -n "__fish_perfgate_using_subcommand ab" -l shuffle-scenarios -d 'Run the scenarios of a launch in a reproducible shuffled order (the same for every model and side) instead of the file\'s order'
complete -c perfgate -n "__fish_perfgate_using_subcommand ab" -l no-cache-reset -d 'Do not reset the engine\'s caches between scenarios (vLLM `POST /reset_prefix_cache`, SGLang `POST /flush_cache`, llama.cpp `"cache_prompt": false` in every request)'
complete -c perfgate -n "__fish_perfgate_using_subcommand ab" -l no-telemetry -d 'No telemetry beside the scenarios. On by default: `nvidia-smi` when on PATH (clocks, power, temperature, throttle reasons), the CPU\'s load, clocks and steal time, and the engine\'s /metrics gauges, sampled on a thread of their own, plus a 0.2 s calibration loop timed before each scenario; summarised in each record\'s `telemetry` key'
complete -c perfgate -n "__fish_perfgate_using_subcommand ab" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c perfgate -n "__fish_perfgate_using_subcommand bisect" -l good -d 'A revision without the regression (the older end)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand bisect" -l bad -d 'A revision with the regression (the newer end)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand bisect" -l revisions -d 'The ordered revisions: a file, one a line, oldest first (`#` comments)' -r -F
complete -c perfgate -n "__fish_perfgate_using_subcommand bisect" -l repo -d 'The ordered revisions: the first-parent commits of this git repository from GOOD to BAD' -r -F
complete -c perfgate -n "__fish_perfgate_using_subcommand bisect" -l baseline -l suite -d 'The suite: a suite or baseline TOML file (models, scenarios, engine, `[gate]`)' -r -F
complete -c perfgate -n "__fish_perfgate_using_subcommand bisect" -l engine-cmd -d 'The engine command template of a revision; `{rev}` is the revision (passed as the environment variable PERFGATE_REV, expanded as one quoted word)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand bisect" -l engine-image -d 'The container image template of a revision (docker presets), e.g. `vllm:{rev}`' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand bisect" -l prepare-cmd -d 'A command run once per revision (per invocation) before its first launch, e.g. to install or build it; `{rev}` as in --engine-cmd. It must be idempotent' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand bisect" -l scenarios -d 'Only these scenarios (comma-separated ids): the ones that regressed' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand bisect" -l metrics -d 'Gate only these metrics (comma-separated): the ones that regressed' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand bisect" -l gate -d 'Gate settings (TOML) applied over the suite\'s `[gate]` table' -r -F
complete -c perfgate -n "__fish_perfgate_using_subcommand bisect" -l max-minutes -d 'Time budget of this invocation in minutes: no scenario starts once it is spent' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand bisect" -l max-pairs -d 'Most pairs of launches per step (one look of the step\'s sequential test per pair)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand bisect" -l runs-per-launch -d 'Runs of the suite inside one launch (they share the engine\'s state, so they count as one launch\'s runs, not as independent replicates)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand bisect" -l models -d 'Only these models (comma-separated names, or the part after the last `/`)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand bisect" -l port -d 'Port for the launched engine (default: the file\'s, else the preset\'s)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand bisect" -l output-dir -d 'Where results records, engine logs, engine metrics and the reports are written' -r -F
complete -c perfgate -n "__fish_perfgate_using_subcommand bisect" -l session -d 'The recording session the records belong to (default: a new one per invocation, named by its start time and process id). Give invocations of one sitting the same id: the gate treats launches of one session as sharing the machine\'s state of that time' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand bisect" -l start-timeout -d 'Seconds an engine may take to become ready (default: the file\'s, else the preset\'s)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand bisect" -l stop-grace -d 'Seconds between SIGTERM and SIGKILL when stopping an engine' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand bisect" -l unresponsive-timeout -d 'An engine whose /health fails this long during a scenario counts as hung' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand bisect" -l metrics-interval -d 'Seconds between /metrics samples during a scenario' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand bisect" -l telemetry-interval -d 'Seconds between telemetry samples' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand bisect" -l warmup-requests -d 'Warm-up after each launch: a discarded pass of every scenario\'s shape (its lengths and concurrency, prompts from another seed) before the measured runs. `auto`: per scenario, its max concurrency (or prompt count) requests, at most its prompt count; N: N requests per scenario; 0: no warm-up' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand bisect" -l tokenizer -d 'Tokenizer for prompt synthesis for every model (a tokenizer.json path, or `server`)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand bisect" -l dataset-path -d 'ShareGPT JSON for `sharegpt` scenarios' -r -F
complete -c perfgate -n "__fish_perfgate_using_subcommand bisect" -l request-timeout -d 'Per-request deadline in seconds (default: none; a hung engine is caught by the health watch)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand bisect" -l scenario-timeout -d 'Hard limit in seconds for one scenario run, after which it counts as an engine fault' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand bisect" -l shuffle-scenarios -d 'Run the scenarios of a launch in a reproducible shuffled order (the same for every model and side) instead of the file\'s order'
complete -c perfgate -n "__fish_perfgate_using_subcommand bisect" -l no-cache-reset -d 'Do not reset the engine\'s caches between scenarios (vLLM `POST /reset_prefix_cache`, SGLang `POST /flush_cache`, llama.cpp `"cache_prompt": false` in every request)'
complete -c perfgate -n "__fish_perfgate_using_subcommand bisect" -l no-telemetry -d 'No telemetry beside the scenarios. On by default: `nvidia-smi` when on PATH (clocks, power, temperature, throttle reasons), the CPU\'s load, clocks and steal time, and the engine\'s /metrics gauges, sampled on a thread of their own, plus a 0.2 s calibration loop timed before each scenario; summarised in each record\'s `telemetry` key'
complete -c perfgate -n "__fish_perfgate_using_subcommand bisect" -s h -l help -d 'Print help'
complete -c perfgate -n "__fish_perfgate_using_subcommand plan" -l gate -d 'Gate settings on top of the baseline\'s `[gate]` table' -r -F
complete -c perfgate -n "__fish_perfgate_using_subcommand plan" -l delta-pct -d 'The change to detect, in percent, worse on every metric (a uniform slowdown)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand plan" -l alpha -d 'The check\'s family-wise level (default: the gate\'s `alpha`)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand plan" -l power -d 'The chance of detecting the change' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand plan" -l startup-s -d 'Seconds of start-up per launch (start, warm-up, stop); default: from --launches-tsv' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand plan" -l launches-tsv -d 'A table of launches\' wall seconds (tab-separated, columns `file` and `seconds`, as the corpora\'s `launches.tsv`): start-up = wall time less the launch\'s runs' -r -F
complete -c perfgate -n "__fish_perfgate_using_subcommand plan" -l max-runs-per-launch -d 'Most runs per launch to consider' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand plan" -l max-launches -d 'Most launches (or pairs) to consider' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand plan" -l compare-launches -d 'A `check` design to compare with: candidate launches (the quick start\'s 2)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand plan" -l compare-pairs -d 'An `ab` design to compare with: pairs (the quick start\'s 6)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand plan" -l compare-runs-per-launch -d 'Runs per launch of the designs to compare with' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand plan" -l save -d 'Write the suite\'s designs to this file, for `check --plan` and `ab --plan`' -r -F
complete -c perfgate -n "__fish_perfgate_using_subcommand plan" -l json -d 'Print the plan as JSON instead of a table'
complete -c perfgate -n "__fish_perfgate_using_subcommand plan" -s h -l help -d 'Print help'
complete -c perfgate -n "__fish_perfgate_using_subcommand compare" -l map -d 'Pair a model of A with a differently named model of B (`A_MODEL=B_MODEL`); repeatable. Models are otherwise paired only by identical names' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand compare" -l html -d 'Also write the side by side as a self-contained HTML page with plots' -r -F
complete -c perfgate -n "__fish_perfgate_using_subcommand compare" -l markdown -d 'Print a markdown table instead of the terminal table'
complete -c perfgate -n "__fish_perfgate_using_subcommand compare" -s h -l help -d 'Print help'
complete -c perfgate -n "__fish_perfgate_using_subcommand report" -l html -d 'The HTML file to write' -r -F
complete -c perfgate -n "__fish_perfgate_using_subcommand report" -l report -d 'A check report (`perfgate check --json`, or `report.json` of a live run). Its baseline and results files are read for the plots when they exist (see `--baseline`, `--results`)' -r -F
complete -c perfgate -n "__fish_perfgate_using_subcommand report" -l baseline -d 'The baseline of the check (default: the file the report names)' -r -F
complete -c perfgate -n "__fish_perfgate_using_subcommand report" -l results -d 'The results of the check, JSON Lines (default: the files the report names)' -r -F
complete -c perfgate -n "__fish_perfgate_using_subcommand report" -l engine-metrics -d 'The engine metrics of the run (default: `engine-metrics.jsonl` next to the results)' -r -F
complete -c perfgate -n "__fish_perfgate_using_subcommand report" -l title -d 'The page\'s title' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand report" -s h -l help -d 'Print help'
complete -c perfgate -n "__fish_perfgate_using_subcommand history" -l metric -d 'Metrics to follow (repeatable). Default: output throughput and the median TTFT, p99 TTFT, median TPOT, ITL and E2E latency' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand history" -l model -d 'Only these models (repeatable)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand history" -l html -d 'Also write the HTML page with one chart per model and metric' -r -F
complete -c perfgate -n "__fish_perfgate_using_subcommand history" -l window -d 'Points on each side of a boundary in the two-window test' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand history" -l gate -d 'Gate settings (TOML) for the noise and tolerance per metric (default: the newest baseline\'s `[gate]` table)' -r -F
complete -c perfgate -n "__fish_perfgate_using_subcommand history" -l all -d 'Print every series, not only those with a change point'
complete -c perfgate -n "__fish_perfgate_using_subcommand history" -s h -l help -d 'Print help'
complete -c perfgate -n "__fish_perfgate_using_subcommand comment" -l report -d 'The JSON report written by `perfgate check --json` or `perfgate merge`' -r -F
complete -c perfgate -n "__fish_perfgate_using_subcommand comment" -l markdown -d 'Post this markdown instead of rendering the report (e.g. from `perfgate check --markdown`)' -r -F
complete -c perfgate -n "__fish_perfgate_using_subcommand comment" -l html-url -d 'Link the HTML sign-off page at this URL (e.g. the uploaded artifact) from the comment' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand comment" -l kind -d 'Report kind: one sticky comment per PR and kind. Default: the report\'s own `kind`' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand comment" -l fail-on -d 'Which verdicts make the exit code non-zero: `regression` (fail 1, error 3), `inconclusive` (also inconclusive 1) or `never` (always 0 once posted)' -r -f -a "regression\t'A regressed row exits 1, an error row 3; inconclusive rows exit 0'
inconclusive\t'Also an inconclusive row (or a scenario missing from the results) exits 1'
never\t'Always exit 0 once the report is out (errors and regressions only reported)'"
complete -c perfgate -n "__fish_perfgate_using_subcommand comment" -l repo -d 'Repository `OWNER/NAME` (default: $GITHUB_REPOSITORY)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand comment" -l pr -d 'Pull request number (default: from the event payload)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand comment" -l sha -d 'Commit the check run is attached to (default: the PR\'s head SHA from the event payload)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand comment" -l check-name -d 'Check run name (default: `perfgate`, or `perfgate (KIND)` for other report kinds)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand comment" -l comment-author -d 'The login whose comment holding the marker is updated (default: the token\'s identity, `GET /user`; `github-actions[bot]` for the workflow\'s own token). Comments by anyone else are never edited. Set it when posting with a GitHub App\'s token (`APP[bot]`)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand comment" -l github-retries -d 'Retries for 5xx answers, rate limits and network errors' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand comment" -l github-retry-delay-ms -d 'Delay before the first retry in milliseconds; doubles per retry, capped at 10 s' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand comment" -l github-timeout-secs -d 'Timeout of one GitHub request, in seconds' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand comment" -l no-comment -d 'Do not post or update the PR comment'
complete -c perfgate -n "__fish_perfgate_using_subcommand comment" -l no-check-run -d 'Do not create a check run'
complete -c perfgate -n "__fish_perfgate_using_subcommand comment" -l no-summary -d 'Do not write the job summary or print annotations (another step already did)'
complete -c perfgate -n "__fish_perfgate_using_subcommand comment" -l allow-fork -d 'Post even from a `pull_request` event whose head is a fork (the job ran untrusted code; prefer the `workflow_run` pattern)'
complete -c perfgate -n "__fish_perfgate_using_subcommand comment" -l fail-on-post-error -d 'Exit 3 when posting to GitHub fails (default: warn; the exit code reflects the gate)'
complete -c perfgate -n "__fish_perfgate_using_subcommand comment" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c perfgate -n "__fish_perfgate_using_subcommand merge" -s o -l output -d 'Where to write the merged report' -r -F
complete -c perfgate -n "__fish_perfgate_using_subcommand merge" -s h -l help -d 'Print help'
complete -c perfgate -n "__fish_perfgate_using_subcommand fake-server" -l port -d 'Port on 127.0.0.1 (0: any free port; the URL is printed)' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand fake-server" -l ttft-ms -d 'Time to the first token, in milliseconds' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand fake-server" -l itl-ms -d 'Time between chunks, in milliseconds' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand fake-server" -l tokens-per-chunk -d 'Tokens per streamed chunk' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand fake-server" -l fault -d 'none, http500, error-event[:N], malformed[:N], close[:N], stall[:N], no-done' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand fake-server" -l fault-every -d 'Apply the fault to every N-th request' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand fake-server" -l model -d 'The model name the server lists and answers as' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand fake-server" -l api -d 'Whose tokenizer endpoints and model list to mimic: llama.cpp, vllm, sglang' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand fake-server" -l max-model-len -d 'A context length: outputs that would run past it are shortened silently, as vLLM does' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand fake-server" -l chat-template-tokens -d 'Tokens a chat template adds to every chat prompt\'s usage.prompt_tokens' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand fake-server" -l lora-modules -d 'LoRA adapters to list at /v1/models and accept as a request\'s `model` (as vLLM\'s `--lora-modules`); with any, other model names get vLLM\'s 404' -r
complete -c perfgate -n "__fish_perfgate_using_subcommand fake-server" -l no-usage -d 'Do not send usage'
complete -c perfgate -n "__fish_perfgate_using_subcommand fake-server" -s h -l help -d 'Print help'
complete -c perfgate -n "__fish_perfgate_using_subcommand completions" -l dir -d 'Write the scripts of every shell into this directory instead' -r -F
complete -c perfgate -n "__fish_perfgate_using_subcommand completions" -s h -l help -d 'Print help'
complete -c perfgate -n "__fish_perfgate_using_subcommand man" -l dir -d 'Write perfgate.1 and one perfgate-COMMAND.1 per subcommand into this directory' -r -F
complete -c perfgate -n "__fish_perfgate_using_subcommand man" -s h -l help -d 'Print help'
complete -c perfgate -n "__fish_perfgate_using_subcommand help; and not __fish_seen_subcommand_from run import baseline check ab bisect plan compare report history comment merge fake-server completions man help" -f -a "run" -d 'Benchmark one scenario against a running OpenAI-compatible server (like `vllm bench serve`)'
complete -c perfgate -n "__fish_perfgate_using_subcommand help; and not __fish_seen_subcommand_from run import baseline check ab bisect plan compare report history comment merge fake-server completions man help" -f -a "import" -d 'Import benchmark results (vLLM/SGLang/LMDeploy logs, JSON, JSONL, CSV) as JSON Lines records'
complete -c perfgate -n "__fish_perfgate_using_subcommand help; and not __fish_seen_subcommand_from run import baseline check ab bisect plan compare report history comment merge fake-server completions man help" -f -a "baseline" -d 'Record, show or validate baseline files'
complete -c perfgate -n "__fish_perfgate_using_subcommand help; and not __fish_seen_subcommand_from run import baseline check ab bisect plan compare report history comment merge fake-server completions man help" -f -a "check" -d 'Gate results against a baseline with statistics; exit 1 on a regression'
complete -c perfgate -n "__fish_perfgate_using_subcommand help; and not __fish_seen_subcommand_from run import baseline check ab bisect plan compare report history comment merge fake-server completions man help" -f -a "ab" -d 'A/B on this runner: the base and the candidate engine launched in pairs, paired statistics after each pair until decided; exit 1 on a regression'
complete -c perfgate -n "__fish_perfgate_using_subcommand help; and not __fish_seen_subcommand_from run import baseline check ab bisect plan compare report history comment merge fake-server completions man help" -f -a "bisect" -d 'Find the revision that made a regression: `ab` comparisons between revisions, bisected; exit 0 when a culprit is named, 1 when none is'
complete -c perfgate -n "__fish_perfgate_using_subcommand help; and not __fish_seen_subcommand_from run import baseline check ab bisect plan compare report history comment merge fake-server completions man help" -f -a "plan" -d 'The design that reaches a verdict for the fewest engine-minutes: per row the noise between sessions, launches and runs (variance components) and the cost of each level, then the launches and runs per launch (`check`) or pairs (`ab`) that detect a change of δ at the gate\'s level with the power asked for; `--save` writes them for `--plan`'
complete -c perfgate -n "__fish_perfgate_using_subcommand help; and not __fish_seen_subcommand_from run import baseline check ab bisect plan compare report history comment merge fake-server completions man help" -f -a "compare" -d 'Compare baselines side by side (e.g. SGLang vs vLLM); `--html` for the plots'
complete -c perfgate -n "__fish_perfgate_using_subcommand help; and not __fish_seen_subcommand_from run import baseline check ab bisect plan compare report history comment merge fake-server completions man help" -f -a "report" -d 'Write the sign-off page (self-contained HTML with plots) from a check report or baselines'
complete -c perfgate -n "__fish_perfgate_using_subcommand help; and not __fish_seen_subcommand_from run import baseline check ab bisect plan compare report history comment merge fake-server completions man help" -f -a "history" -d 'Follow metrics across baselines (releases) and flag change points'
complete -c perfgate -n "__fish_perfgate_using_subcommand help; and not __fish_seen_subcommand_from run import baseline check ab bisect plan compare report history comment merge fake-server completions man help" -f -a "comment" -d 'Post a check report to GitHub: sticky PR comment, check run, job summary'
complete -c perfgate -n "__fish_perfgate_using_subcommand help; and not __fish_seen_subcommand_from run import baseline check ab bisect plan compare report history comment merge fake-server completions man help" -f -a "merge" -d 'Merge per-model check reports (from a matrix) into one report'
complete -c perfgate -n "__fish_perfgate_using_subcommand help; and not __fish_seen_subcommand_from run import baseline check ab bisect plan compare report history comment merge fake-server completions man help" -f -a "fake-server" -d 'Serve a fake OpenAI streaming API on 127.0.0.1 (for demos and benchmarks); prints its URL'
complete -c perfgate -n "__fish_perfgate_using_subcommand help; and not __fish_seen_subcommand_from run import baseline check ab bisect plan compare report history comment merge fake-server completions man help" -f -a "completions" -d 'Print a shell completion script to standard output (or write all of them to --dir)'
complete -c perfgate -n "__fish_perfgate_using_subcommand help; and not __fish_seen_subcommand_from run import baseline check ab bisect plan compare report history comment merge fake-server completions man help" -f -a "man" -d 'Print the man page (roff) to standard output (or write one page per command to --dir)'
complete -c perfgate -n "__fish_perfgate_using_subcommand help; and not __fish_seen_subcommand_from run import baseline check ab bisect plan compare report history comment merge fake-server completions man help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c perfgate -n "__fish_perfgate_using_subcommand help; and __fish_seen_subcommand_from baseline" -f -a "record" -d 'Build a baseline TOML file from JSON Lines records (`perfgate import`/`perfgate run`)'
complete -c perfgate -n "__fish_perfgate_using_subcommand help; and __fish_seen_subcommand_from baseline" -f -a "show" -d 'Show a baseline: a summary table, or its records as JSON Lines with `--json`'
complete -c perfgate -n "__fish_perfgate_using_subcommand help; and __fish_seen_subcommand_from baseline" -f -a "schema" -d 'Print the JSON Schema of the baseline file format'
complete -c perfgate -n "__fish_perfgate_using_subcommand help; and __fish_seen_subcommand_from baseline" -f -a "noise" -d 'Print each row\'s noise as the gate estimates it: the standard deviations (log scale, ≈ relative) between sessions, between launches of a session and between runs of a launch, with their degrees of freedom, the value the gate uses (moderated toward the metric\'s other rows), and how many launches of a new session an unchanged engine would likely need to pass; then each model\'s engine-wide series'
complete -c perfgate -n "__fish_perfgate_using_subcommand help; and __fish_seen_subcommand_from baseline" -f -a "calibrate" -d 'Calibrate: build (or extend, with `--runs-from`) a baseline from A/A launches of one engine recorded over ≥ 2 sessions (e.g. two `perfgate check --runs N` invocations), so that the gate measures the between-session variance instead of assuming it; prints the noise profile. Refuses records of fewer than 2 sessions'
complete -c perfgate -n "__fish_perfgate_using_subcommand help; and __fish_seen_subcommand_from baseline" -f -a "promote" -d 'Make checked results the new baseline, with provenance (source report, commit, date); refuses results whose check failed unless `--force`, and prints what changed'
