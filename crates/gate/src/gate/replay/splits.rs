//! The splits a replay decides: which launches form the baseline and which the candidate, drawn
//! at random, by recording session, or with the candidate in a new session.

use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::Rng;
use rand::SeedableRng;

use super::{Design, Launch, Split};

/// The most splits [`splits`] lists before sampling from them; beyond it (32 launches at
/// 5 × 5: 1.6 · 10¹⁰) it draws its sample directly. Every design of a corpus of up to 16
/// launches (at most 2.0 · 10⁶ splits) is still listed, so their seeded samples are unchanged.
pub(super) const LIST_AT_MOST: f64 = 1e7;

/// Up to `max` distinct ways to draw a baseline of `d.n_base` and a disjoint candidate of
/// `d.n_cur` from `n` launches: all of them when there are few, else a seeded sample.
pub fn splits(n: usize, d: Design, max: usize, seed: u64) -> Vec<Split> {
    let mut all = Vec::new();
    if d.n_base + d.n_cur > n || d.n_base == 0 || d.n_cur == 0 {
        return all;
    }
    let ways = choose(n, d.n_base) * choose(n - d.n_base, d.n_cur);
    if ways > LIST_AT_MOST {
        return drawn_splits(n, d, max.min(ways as usize), seed);
    }
    for base in combinations(n, d.n_base) {
        let rest: Vec<usize> = (0..n).filter(|i| !base.contains(i)).collect();
        for cur in combinations(rest.len(), d.n_cur) {
            all.push((base.clone(), cur.iter().map(|&i| rest[i]).collect()));
        }
    }
    sample(all, max, seed)
}

/// Up to `max` session splits of design `d`: a baseline of `d.n_base` launches all of one
/// recording session and a candidate of `d.n_cur` all of another, every ordered pair of sessions
/// (the split a stored baseline and a later check make), all of them when there are few, else a
/// seeded sample. Launches without a session id are one session. A non-empty `candidates`
/// keeps the splits whose candidate is of one of those sessions (a sitting held out of every
/// choice the gate's constants were measured on).
pub fn session_splits(
    launches: &[Launch],
    d: Design,
    max: usize,
    seed: u64,
    candidates: &[String],
) -> Vec<Split> {
    let sessions = sessions_of(launches);
    let mut all = Vec::new();
    for x in &sessions {
        for y in sessions
            .iter()
            .filter(|y| *y != x && is_candidate(y, candidates))
        {
            let (ix, iy) = (members(launches, x), members(launches, y));
            if ix.len() < d.n_base || iy.len() < d.n_cur || d.n_base == 0 || d.n_cur == 0 {
                continue;
            }
            for b in combinations(ix.len(), d.n_base) {
                for c in combinations(iy.len(), d.n_cur) {
                    all.push((
                        b.iter().map(|&i| ix[i]).collect(),
                        c.iter().map(|&i| iy[i]).collect(),
                    ));
                }
            }
        }
    }
    sample(all, max, seed)
}

/// Up to `max` new-session splits of design `d`: a candidate of `d.n_cur` launches all of one
/// session, and a baseline of `d.n_base` launches from the other sessions that spans at least
/// two of them (a baseline recorded over sittings, then checked in a new one: the workflow
/// that measures the session offset instead of assuming it). Every session takes its turn as
/// the candidate's (with a non-empty `candidates`, only those sessions, as in
/// [`session_splits`]); all splits when there are few, else a seeded sample, drawn directly
/// (never listed) beyond 10⁷ splits, as [`splits`] does (40 launches in five sessions at 5 × 3:
/// 5.6 · 10⁷). Empty with fewer than three sessions.
pub fn new_session_splits(
    launches: &[Launch],
    d: Design,
    max: usize,
    seed: u64,
    candidates: &[String],
) -> Vec<Split> {
    let sessions = sessions_of(launches);
    let mut all = Vec::new();
    if sessions.len() < 3 || d.n_base < 2 || d.n_cur == 0 {
        return all;
    }
    let turns: Vec<Turn> = sessions
        .iter()
        .filter(|y| is_candidate(y, candidates))
        .filter_map(|y| Turn::of(launches, &sessions, y, d))
        .filter(|t| t.ways > 0.0)
        .collect();
    let ways: f64 = turns.iter().map(|t| t.ways).sum();
    if ways > LIST_AT_MOST {
        return drawn_new_session(launches, &turns, d, max.min(ways as usize), seed);
    }
    for t in &turns {
        for b in combinations(t.others.len(), d.n_base) {
            let base: Vec<usize> = b.iter().map(|&i| t.others[i]).collect();
            if one_session(launches, &base) {
                continue;
            }
            for c in combinations(t.own.len(), d.n_cur) {
                all.push((base.clone(), c.iter().map(|&i| t.own[i]).collect()));
            }
        }
    }
    sample(all, max, seed)
}

/// One session's turn as the candidate's in [`new_session_splits`]: the other sessions'
/// launches, its own, and the number of splits it gives.
struct Turn {
    others: Vec<usize>,
    own: Vec<usize>,
    ways: f64,
}

impl Turn {
    /// `None` when the session has too few launches for the candidate, or the others too few
    /// for the baseline.
    fn of(
        launches: &[Launch],
        sessions: &[Option<String>],
        y: &Option<String>,
        d: Design,
    ) -> Option<Turn> {
        let (others, own): (Vec<usize>, Vec<usize>) =
            (0..launches.len()).partition(|&i| launches[i].session() != *y);
        if others.len() < d.n_base || own.len() < d.n_cur {
            return None;
        }
        // Baselines of the others, less those that lie in one session.
        let one: f64 = sessions
            .iter()
            .filter(|s| *s != y)
            .map(|s| choose(members(launches, s).len(), d.n_base))
            .sum();
        let ways = (choose(others.len(), d.n_base) - one) * choose(own.len(), d.n_cur);
        Some(Turn { others, own, ways })
    }
}

/// Whether every launch of `idx` is of one session.
fn one_session(launches: &[Launch], idx: &[usize]) -> bool {
    let first = launches[idx[0]].session();
    idx.iter().all(|&i| launches[i].session() == first)
}

/// `max` distinct new-session splits drawn by seeded shuffles: a turn chosen in proportion to
/// its splits, then a baseline from its other sessions (drawn again while it lies in one
/// session) and a candidate from its own.
fn drawn_new_session(
    launches: &[Launch],
    turns: &[Turn],
    d: Design,
    max: usize,
    seed: u64,
) -> Vec<Split> {
    let total: f64 = turns.iter().map(|t| t.ways).sum();
    distinct_draws(max, seed, |rng| {
        let mut x = rng.random::<f64>() * total;
        let t = turns
            .iter()
            .find(|t| {
                x -= t.ways;
                x < 0.0
            })
            .unwrap_or(&turns[turns.len() - 1]);
        let mut others = t.others.clone();
        others.shuffle(rng);
        let base = others[..d.n_base].to_vec();
        if one_session(launches, &base) {
            return None;
        }
        let mut own = t.own.clone();
        own.shuffle(rng);
        Some((base, own[..d.n_cur].to_vec()))
    })
}

/// Whether session `s` may hold the candidate: any when `candidates` is empty.
fn is_candidate(s: &Option<String>, candidates: &[String]) -> bool {
    candidates.is_empty() || s.as_ref().is_some_and(|s| candidates.contains(s))
}

/// The launches' distinct sessions, in order of first appearance.
pub(super) fn sessions_of(launches: &[Launch]) -> Vec<Option<String>> {
    let mut out = Vec::new();
    for l in launches {
        if !out.contains(&l.session()) {
            out.push(l.session());
        }
    }
    out
}

/// The indices of the launches of session `s`.
pub(super) fn members(launches: &[Launch], s: &Option<String>) -> Vec<usize> {
    (0..launches.len())
        .filter(|&i| launches[i].session() == *s)
        .collect()
}

/// All of `all` when there are at most `max`, else a seeded sample of `max`.
fn sample(mut all: Vec<Split>, max: usize, seed: u64) -> Vec<Split> {
    if all.len() > max {
        let mut rng = StdRng::seed_from_u64(seed);
        all.shuffle(&mut rng);
        all.truncate(max);
    }
    all
}

/// n choose k, as a float (the counts of splits overflow integers long before memory would).
pub(super) fn choose(n: usize, k: usize) -> f64 {
    (0..k).fold(1.0, |acc, i| acc * (n - i) as f64 / (i + 1) as f64)
}

/// `max` distinct splits of design `d` drawn from `n` launches by seeded shuffles, each side
/// sorted: for designs with too many splits to list.
fn drawn_splits(n: usize, d: Design, max: usize, seed: u64) -> Vec<Split> {
    let mut order: Vec<usize> = (0..n).collect();
    distinct_draws(max, seed, |rng| {
        order.shuffle(rng);
        Some((
            order[..d.n_base].to_vec(),
            order[d.n_base..d.n_base + d.n_cur].to_vec(),
        ))
    })
}

/// `max` distinct splits from a seeded generator: `draw` proposes one (`None`: rejected, draw
/// again), each side is sorted as listing makes them, and a split already drawn is dropped.
/// There must be at least `max` distinct splits to draw.
fn distinct_draws(
    max: usize,
    seed: u64,
    mut draw: impl FnMut(&mut StdRng) -> Option<Split>,
) -> Vec<Split> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::with_capacity(max);
    while out.len() < max {
        let Some((mut base, mut cur)) = draw(&mut rng) else {
            continue;
        };
        base.sort_unstable();
        cur.sort_unstable();
        if seen.insert((base.clone(), cur.clone())) {
            out.push((base, cur));
        }
    }
    out
}

fn combinations(n: usize, k: usize) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    let mut cur = Vec::with_capacity(k);
    fn go(start: usize, n: usize, k: usize, cur: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        if cur.len() == k {
            out.push(cur.clone());
            return;
        }
        for i in start..n {
            if n - i < k - cur.len() {
                break;
            }
            cur.push(i);
            go(i + 1, n, k, cur, out);
            cur.pop();
        }
    }
    go(0, n, k, &mut cur, &mut out);
    out
}
