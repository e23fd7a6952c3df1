use super::*;

#[test]
fn the_engine_never_inherits_github_control_files_or_tokens() {
    let pass = vec!["HF_TOKEN".to_string(), "GITHUB_TOKEN".to_string()];
    for denied in [
        "GITHUB_OUTPUT",
        "GITHUB_ENV",
        "GITHUB_PATH",
        "GITHUB_STATE",
        "GITHUB_STEP_SUMMARY",
        "GITHUB_TOKEN",
        "GH_TOKEN",
        "ACTIONS_RUNTIME_TOKEN",
        "ACTIONS_ID_TOKEN_REQUEST_URL",
        "ACTIONS_CACHE_URL",
        "MY_SECRET",
        "npm_token",
        "DB_PASSWORD",
    ] {
        assert!(env_denied(denied, &pass), "{denied}");
    }
    for kept in [
        "PATH",
        "HOME",
        "HF_TOKEN",
        "CUDA_VISIBLE_DEVICES",
        "GITHUB_SHA",
    ] {
        assert!(!env_denied(kept, &pass), "{kept}");
    }
    assert!(env_denied("HF_TOKEN", &[]));
}

#[test]
fn gpu_memory_lines_are_summed() {
    assert_eq!(parse_gpu_memory("1024\n 2048 \n"), Some(3072));
    assert_eq!(parse_gpu_memory(""), None);
    assert_eq!(parse_gpu_memory("N/A\n"), None);
}

#[test]
fn log_tail_keeps_last_lines() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("l.log");
    let text: String = (0..100).map(|i| format!("line {i}\n")).collect();
    std::fs::write(&p, text).unwrap();
    assert_eq!(log_tail(&p, 2), "line 98\nline 99");
    assert_eq!(log_tail(&dir.path().join("missing"), 2), "");
}

#[test]
fn a_bound_port_is_reported() {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    assert!(port_in_use(port).is_some());
    drop(l);
    assert_eq!(port_in_use(port), None);
}
