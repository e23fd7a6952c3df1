//! LoRA adapter selection (vLLM's `--lora-modules` and `--lora-assignment`): each request names
//! one of the adapters the server was started with as its `model`, chosen at random (seeded by
//! `--seed`) or in turn.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::dataset::Prompt;

/// How requests are spread over the adapters (vLLM's `--lora-assignment`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LoraAssignment {
    /// Each request takes an adapter drawn at random (seeded).
    #[default]
    Random,
    /// Request i takes adapter i mod n.
    RoundRobin,
}

/// A salt so the adapter draw does not repeat the dataset's draws for the same seed.
const SALT: u64 = 0x4c6f_5241;

/// Set each prompt's `model` to one of `modules` (nothing when `modules` is empty).
pub fn assign(prompts: &mut [Prompt], modules: &[String], how: LoraAssignment, seed: u64) {
    if modules.is_empty() {
        return;
    }
    let mut rng = StdRng::seed_from_u64(seed ^ SALT);
    for (i, p) in prompts.iter_mut().enumerate() {
        let k = match how {
            LoraAssignment::RoundRobin => i % modules.len(),
            LoraAssignment::Random => rng.random_range(0..modules.len()),
        };
        p.model = Some(modules[k].clone());
    }
}

/// Check `--lora-modules`: names not empty, no name twice.
pub fn check(modules: &[String]) -> Result<(), String> {
    for (i, m) in modules.iter().enumerate() {
        if m.trim().is_empty() {
            return Err("--lora-modules: an empty adapter name".into());
        }
        if modules[..i].contains(m) {
            return Err(format!("--lora-modules: `{m}` is given twice"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(p: &[Prompt]) -> Vec<&str> {
        p.iter().map(|p| p.model.as_deref().unwrap()).collect()
    }

    #[test]
    fn round_robin_cycles_and_random_is_seeded() {
        let mods: Vec<String> = ["a", "b", "c"].iter().map(|s| s.to_string()).collect();
        let mut p = vec![Prompt::default(); 7];
        assign(&mut p, &mods, LoraAssignment::RoundRobin, 0);
        assert_eq!(names(&p), ["a", "b", "c", "a", "b", "c", "a"]);
        let mut p = vec![Prompt::default(); 300];
        assign(&mut p, &mods, LoraAssignment::Random, 1);
        let first = names(&p).join(",");
        assign(&mut p, &mods, LoraAssignment::Random, 1);
        assert_eq!(names(&p).join(","), first);
        for m in ["a", "b", "c"] {
            let n = names(&p).iter().filter(|&&x| x == m).count();
            assert!((60..140).contains(&n), "{m}: {n}");
        }
        assign(&mut p, &mods, LoraAssignment::Random, 2);
        assert_ne!(names(&p).join(","), first);
        let mut none = vec![Prompt::default(); 2];
        assign(&mut none, &[], LoraAssignment::Random, 0);
        assert!(none.iter().all(|p| p.model.is_none()));
    }

    #[test]
    fn bad_module_lists_are_refused() {
        assert!(check(&["a".into(), "a".into()])
            .unwrap_err()
            .contains("twice"));
        assert!(check(&[" ".into()]).is_err());
        assert!(check(&["a".into(), "b".into()]).is_ok());
    }
}
