use super::*;
use crate::sample::record;

/// One launch per entry of `sessions`, named `l0`, `l1`, …, in that session.
fn launches_in(sessions: &[&str]) -> Vec<Launch> {
    sessions
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let mut r = record("m", 100, 1.0, 1.0);
            r.session_id = Some(s.to_string());
            Launch::new(&format!("l{i}"), vec![r])
        })
        .collect()
}

#[test]
fn splits_are_disjoint_and_complete() {
    let s = splits(
        5,
        Design {
            n_base: 2,
            n_cur: 2,
        },
        1000,
        1,
    );
    // C(5,2)·C(3,2) = 30
    assert_eq!(s.len(), 30);
    for (b, c) in &s {
        assert!(b.iter().all(|i| !c.contains(i)));
    }
    assert_eq!(
        splits(
            5,
            Design {
                n_base: 2,
                n_cur: 2
            },
            7,
            1
        )
        .len(),
        7
    );
    assert!(splits(
        3,
        Design {
            n_base: 2,
            n_cur: 2
        },
        7,
        1
    )
    .is_empty());
}

#[test]
fn confirmation_launches_come_from_the_candidates_session_first() {
    let sessions = ["a", "a", "b", "b", "a", "b", "a", "b"];
    let ls = launches_in(&sessions);
    for seed in 0..20 {
        let mut rng = StdRng::seed_from_u64(seed);
        // Baseline 0 and 2; candidate 3 (session b): the others of b (5, 7), then of a.
        let order = confirmation_order(&ls, &[0, 2], &[3], &mut rng);
        assert_eq!(order.len(), 5);
        let mut first: Vec<usize> = order[..2].to_vec();
        first.sort();
        assert_eq!(first, vec![5, 7], "seed {seed}: {order:?}");
        assert!(order[2..].iter().all(|&i| sessions[i] == "a"));
    }
    // Seeded: the same seed, the same order; the groups are shuffled, not sorted.
    let draw = |seed| confirmation_order(&ls, &[0], &[2], &mut StdRng::seed_from_u64(seed));
    assert_eq!(draw(3), draw(3));
    assert!((0..20).any(|s| draw(s)[..3] != [3, 5, 7]));
}

/// The sessions of eight launches: a (3 launches), b (4), c (1).
const THREE_SESSIONS: [&str; 8] = ["a", "b", "a", "b", "b", "a", "b", "c"];

#[test]
fn session_splits_keep_each_side_in_one_session() {
    let sessions = THREE_SESSIONS;
    let ls = launches_in(&sessions);
    let d = Design {
        n_base: 2,
        n_cur: 2,
    };
    let s = session_splits(&ls, d, 1000, 1, &[]);
    // a → b and b → a: C(3,2)·C(4,2) each way; c has too few launches for either side.
    assert_eq!(s.len(), 2 * 3 * 6);
    for (b, c) in &s {
        let one = |idx: &[usize]| idx.iter().all(|&i| sessions[i] == sessions[idx[0]]);
        assert!(one(b) && one(c), "{b:?} {c:?}");
        assert_ne!(sessions[b[0]], sessions[c[0]]);
    }
    assert_eq!(session_splits(&ls, d, 10, 1, &[]).len(), 10);
    assert_eq!(
        session_splits(&ls, d, 10, 1, &[]),
        session_splits(&ls, d, 10, 1, &[])
    );
    // One launch a side: c → a, a → c and the rest.
    let one = Design {
        n_base: 1,
        n_cur: 1,
    };
    assert_eq!(
        session_splits(&ls, one, 1000, 1, &[]).len(),
        2 * (3 * 4 + 3 + 4)
    );
    // Candidates held to session c: a → c and b → c only.
    let only_c = session_splits(&ls, one, 1000, 1, &["c".to_string()]);
    assert_eq!(only_c.len(), 3 + 4);
    assert!(only_c.iter().all(|(_, c)| c == &vec![7]), "{only_c:?}");
    // Decided once: an unchanged candidate of identical launches never fails.
    let t = replay_splits(&ls, &s, &Change::None, &GateConfig::default());
    assert_eq!((t.checks, t.failed), (36, 0));
}

#[test]
fn new_session_splits_give_the_baseline_two_sessions_and_the_candidate_another() {
    let sessions = THREE_SESSIONS;
    let ls = launches_in(&sessions);
    let d = Design {
        n_base: 2,
        n_cur: 1,
    };
    let s = new_session_splits(&ls, d, 1000, 1, &[]);
    // Candidate in a (3 ways): baselines from b and c spanning both, 4·1; in b (4 ways): a and
    // c, 3·1; in c (1 way): a and b, 3·4. 3·4 + 4·3 + 1·12 = 36.
    assert_eq!(s.len(), 36);
    for (b, c) in &s {
        assert!(c.iter().all(|&i| sessions[i] == sessions[c[0]]), "{c:?}");
        assert!(
            b.iter().all(|&i| sessions[i] != sessions[c[0]]),
            "{b:?} {c:?}"
        );
        assert!(b.iter().any(|&i| sessions[i] != sessions[b[0]]), "{b:?}");
    }
    assert_eq!(new_session_splits(&ls, d, 10, 1, &[]).len(), 10);
    // Candidates held to b (4 ways) or to c (1): 12 + 12; to a session no launch has: none.
    let keep = |names: &[&str]| {
        let names: Vec<String> = names.iter().map(|s| s.to_string()).collect();
        new_session_splits(&ls, d, 1000, 1, &names)
    };
    assert_eq!(keep(&["b"]).len(), 12);
    assert_eq!(keep(&["b", "c"]).len(), 24);
    assert!(keep(&["z"]).is_empty());
    assert!(keep(&["c"]).iter().all(|(_, c)| c == &vec![7]));
    // Two sessions, or a baseline of one launch, cannot do it.
    assert!(new_session_splits(&ls[..7], d, 1000, 1, &[]).is_empty());
    let one = Design {
        n_base: 1,
        n_cur: 1,
    };
    assert!(new_session_splits(&ls, one, 1000, 1, &[]).is_empty());
}

#[test]
fn new_session_splits_of_a_large_corpus_are_drawn_not_listed() {
    // Five sessions of eight launches at 5 × 3: 5 · (C(32,5) − 4 · C(8,5)) · C(8,3) =
    // 5 · 201,152 · 56 ≈ 5.6 · 10⁷ splits, too many to list: drawn, with the same properties.
    let sessions: Vec<String> = (0..40).map(|i| format!("s{}", i / 8)).collect();
    let names: Vec<&str> = sessions.iter().map(String::as_str).collect();
    let ls = launches_in(&names);
    let d = Design {
        n_base: 5,
        n_cur: 3,
    };
    let s = new_session_splits(&ls, d, 300, 7, &[]);
    assert_eq!(s.len(), 300);
    let distinct: std::collections::HashSet<_> = s.iter().collect();
    assert_eq!(distinct.len(), 300);
    let mut turns = std::collections::BTreeSet::new();
    for (b, c) in &s {
        assert!(b.windows(2).all(|w| w[0] < w[1]) && c.windows(2).all(|w| w[0] < w[1]));
        assert!(c.iter().all(|&i| names[i] == names[c[0]]), "{c:?}");
        assert!(b.iter().all(|&i| names[i] != names[c[0]]), "{b:?} {c:?}");
        assert!(b.iter().any(|&i| names[i] != names[b[0]]), "{b:?}");
        turns.insert(names[c[0]]);
    }
    // Every session takes its turn (each holds a fifth of the splits).
    assert_eq!(turns.len(), 5);
    assert_eq!(new_session_splits(&ls, d, 300, 7, &[]), s);
    assert_ne!(new_session_splits(&ls, d, 300, 8, &[]), s);
    // Held to one session's candidates, drawn too (1.1 · 10⁷ splits).
    let only = new_session_splits(&ls, d, 100, 7, &["s4".to_string()]);
    assert_eq!(only.len(), 100);
    assert!(only.iter().all(|(_, c)| c.iter().all(|&i| i >= 32)));
}

#[test]
fn a_slower_engine_is_slower_everywhere() {
    let r = record("m", 100, 1.0, 1.0);
    let s = Change::Slower {
        pct: 10.0,
        scenario: None,
    }
    .apply(&r);
    assert!((s.output_throughput / r.output_throughput - 0.9).abs() < 1e-12);
    let k = "median_ttft_ms";
    assert!((s.stats[k] / r.stats[k] - 1.0 / 0.9).abs() < 1e-12);
    let other = Change::Slower {
        pct: 10.0,
        scenario: Some("nope".into()),
    }
    .apply(&r);
    assert_eq!(other, r);
    let l = Change::Latency {
        metric: "ttft".into(),
        pct: 50.0,
        scenario: None,
    }
    .apply(&r);
    assert!((l.stats[k] / r.stats[k] - 1.5).abs() < 1e-12);
    assert_eq!(l.stats["median_tpot_ms"], r.stats["median_tpot_ms"]);
}

#[test]
fn ab_in_sessions_pairs_launches_of_one_sitting_only() {
    // Two sittings of six launches, the second 30 % slower in everything, ±1 % within each.
    let ls: Vec<Launch> = (0..12)
        .map(|i| {
            let (s, scale) = if i < 6 { ("a", 1.0) } else { ("b", 1.0 / 1.3) };
            let w = scale * (1.0 + 0.01 * (2.3 * i as f64).sin());
            let mut r = record("m", 100, w, 1.0 / w);
            r.session_id = Some(s.into());
            Launch::new(&format!("l{i}"), vec![r])
        })
        .collect();
    let cfg = GateConfig::default();
    let within = replay_ab_in_sessions(&ls, 3, &Change::None, &cfg, 40, 1);
    let across = replay_ab(&ls, 3, &Change::None, &cfg, 40, 1);
    assert_eq!((within.checks, across.checks), (40, 40));
    // Pairs of one sitting see ±1 %: no alarm, and most rows pass; pairs across the sittings
    // carry the 30 % offset into their differences and pass far less.
    assert_eq!(within.failed, 0);
    assert!(within.pass_rate() >= 0.5, "{within:?}");
    assert!(
        across.pass_rate() < within.pass_rate(),
        "{across:?} {within:?}"
    );
    // Four pairs need eight launches of one sitting: none has them.
    assert_eq!(
        replay_ab_in_sessions(&ls, 4, &Change::None, &cfg, 10, 1).checks,
        0
    );
    assert_eq!(replay_ab(&ls, 4, &Change::None, &cfg, 10, 1).checks, 10);
    // One session: the same draws as across all launches.
    let one: Vec<Launch> = ls[..6].to_vec();
    let (x, y) = (
        replay_ab_in_sessions(&one, 2, &Change::None, &cfg, 20, 7),
        replay_ab(&one, 2, &Change::None, &cfg, 20, 7),
    );
    assert_eq!(
        (x.checks, x.failed, x.passed, x.pairs),
        (y.checks, y.failed, y.passed, y.pairs)
    );
}

#[test]
fn splits_of_many_launches_are_drawn_not_listed() {
    // 32 launches at 8 × 8: 10.5 · 10⁶ · 735,471 ways, far too many to list.
    let d = Design {
        n_base: 8,
        n_cur: 8,
    };
    let s = splits(32, d, 500, 3);
    assert_eq!(s.len(), 500);
    let distinct: std::collections::HashSet<_> = s.iter().cloned().collect();
    assert_eq!(distinct.len(), 500);
    for (b, c) in &s {
        assert_eq!((b.len(), c.len()), (8, 8));
        assert!(b.windows(2).all(|w| w[0] < w[1]) && c.windows(2).all(|w| w[0] < w[1]));
        assert!(b.iter().all(|i| !c.contains(i) && *i < 32));
    }
    assert_eq!(splits(32, d, 500, 3), s, "seeded");
    // Every launch is drawn into some split, on both sides.
    for i in 0..32 {
        assert!(s.iter().any(|(b, _)| b.contains(&i)) && s.iter().any(|(_, c)| c.contains(&i)));
    }
    assert!((choose(32, 8) - 10_518_300.0).abs() < 1e-3);
    // At 16 launches the largest design is still listed: every split of 2 × 1 is there.
    let all = splits(
        16,
        Design {
            n_base: 2,
            n_cur: 1,
        },
        usize::MAX,
        1,
    );
    assert_eq!(all.len(), 120 * 14);
    assert!(choose(16, 5) * choose(11, 5) <= LIST_AT_MOST);
}
