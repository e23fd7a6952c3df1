//! The machine a run measured on, as far as perfgate can name it without privileges: the CPU's
//! model name and the instruction-set extensions an inference engine picks its kernels by
//! (`/proc/cpuinfo`), how many CPUs the process may use, and each GPU's name with the driver
//! (`nvidia-smi --query-gpu=name,driver_version`). Two runs whose platforms differ ran on
//! different machines; the converse does not hold (a host of the same kind, or a loaded one, is
//! what the calibration loop's time tells).

use serde::{Deserialize, Serialize};

/// Instruction-set extensions that decide which kernels an engine runs (x86 `flags`, Arm
/// `Features`), the ones a platform keeps; the rest of the flags say little about speed.
pub const NOTABLE_FEATURES: [&str; 20] = [
    "avx",
    "avx2",
    "fma",
    "f16c",
    "avx512f",
    "avx512bw",
    "avx512_vnni",
    "avx512_bf16",
    "avx512_fp16",
    "avx_vnni",
    "amx_tile",
    "amx_bf16",
    "amx_int8",
    "amx_fp16",
    "asimd",
    "asimddp",
    "sve",
    "sve2",
    "i8mm",
    "bf16",
];

/// The machine under one run.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Platform {
    /// `/proc/cpuinfo`'s `model name` (a virtual machine's may be generic).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<String>,
    /// The [`NOTABLE_FEATURES`] the CPU reports, in that list's order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpu_features: Vec<String>,
    /// CPUs the process may use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<u32>,
    /// Each GPU's name, in `nvidia-smi`'s index order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gpus: Vec<String>,
    /// The NVIDIA driver's version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_driver: Option<String>,
}

impl Platform {
    /// The CPU's model name and notable features from the text of `/proc/cpuinfo` (its first
    /// processor's block; the machines perfgate runs on have one kind of core).
    pub fn from_cpuinfo(text: &str, cpus: Option<u32>) -> Platform {
        let field = |key: &str| {
            text.lines().find_map(|l| {
                let (k, v) = l.split_once(':')?;
                (k.trim() == key).then(|| v.trim().to_string())
            })
        };
        let flags = field("flags").or_else(|| field("Features"));
        let have: Vec<&str> = flags.as_deref().unwrap_or("").split_whitespace().collect();
        Platform {
            cpu: field("model name").filter(|m| !m.is_empty()),
            cpu_features: NOTABLE_FEATURES
                .iter()
                .filter(|f| have.contains(f))
                .map(|f| (*f).to_string())
                .collect(),
            cpus,
            ..Default::default()
        }
    }

    /// Add the GPUs of an `nvidia-smi --query-gpu=name,driver_version --format=csv,noheader`
    /// answer; `false` (and nothing added) when a line is not `NAME, VERSION`.
    pub fn add_gpus(&mut self, text: &str) -> bool {
        let mut names = Vec::new();
        let mut driver = None;
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let Some((name, version)) = line.rsplit_once(',') else {
                return false;
            };
            let (name, version) = (name.trim(), version.trim());
            if name.is_empty() || version.is_empty() {
                return false;
            }
            names.push(name.to_string());
            driver = Some(version.to_string());
        }
        self.gpus = names;
        self.gpu_driver = driver;
        true
    }

    /// Whether `/proc/cpuinfo` gave anything: a model name, or features (Arm's has no model
    /// name).
    fn read_cpuinfo(&self) -> bool {
        self.cpu.is_some() || !self.cpu_features.is_empty()
    }

    /// What differs from `earlier` to `self`, in words (`2 → 4 CPUs`, `CPU features +amx_tile`,
    /// …); empty when nothing both know differs. A part one of them does not know (no GPU list:
    /// `nvidia-smi` absent or failing) is not compared.
    pub fn changes_since(&self, earlier: &Platform) -> Vec<String> {
        let mut out = Vec::new();
        if let (Some(a), Some(b)) = (&earlier.cpu, &self.cpu) {
            if a != b {
                out.push(format!("CPU `{a}` → `{b}`"));
            }
        }
        if earlier.read_cpuinfo()
            && self.read_cpuinfo()
            && earlier.cpu_features != self.cpu_features
        {
            let gone = earlier
                .cpu_features
                .iter()
                .filter(|f| !self.cpu_features.contains(f))
                .map(|f| format!("−{f}"));
            let new = self
                .cpu_features
                .iter()
                .filter(|f| !earlier.cpu_features.contains(f))
                .map(|f| format!("+{f}"));
            out.push(format!(
                "CPU features {}",
                gone.chain(new).collect::<Vec<_>>().join(" ")
            ));
        }
        if let (Some(a), Some(b)) = (earlier.cpus, self.cpus) {
            if a != b {
                out.push(format!("{a} → {b} CPUs"));
            }
        }
        if !earlier.gpus.is_empty() && !self.gpus.is_empty() {
            if earlier.gpus != self.gpus {
                out.push(format!(
                    "GPUs {} → {}",
                    gpu_list(&earlier.gpus),
                    gpu_list(&self.gpus)
                ));
            }
            if let (Some(a), Some(b)) = (&earlier.gpu_driver, &self.gpu_driver) {
                if a != b {
                    out.push(format!("GPU driver {a} → {b}"));
                }
            }
        }
        out
    }
}

/// GPU names, runs of one name counted: `8 × NVIDIA H100 80GB HBM3`.
fn gpu_list(names: &[String]) -> String {
    let mut parts: Vec<(usize, &str)> = Vec::new();
    for n in names {
        match parts.last_mut() {
            Some((k, last)) if *last == n.as_str() => *k += 1,
            _ => parts.push((1, n)),
        }
    }
    parts
        .iter()
        .map(|(k, n)| format!("{k} × {n}"))
        .collect::<Vec<_>>()
        .join(" + ")
}

#[cfg(test)]
mod tests {
    use super::*;

    const XEON: &str = "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) \
        Processor\nflags\t\t: fpu sse4_2 avx avx2 fma avx512f avx512bw avx512_vnni amx_tile \
        amx_bf16\n\nprocessor\t: 1\nmodel name\t: Intel(R) Xeon(R) Processor\n";
    const ARM: &str = "processor\t: 0\nBogoMIPS\t: 2000.00\nFeatures\t: fp asimd asimddp sve \
        i8mm bf16 atomics\nCPU implementer\t: 0x41\n";

    #[test]
    fn cpuinfo_gives_the_model_and_the_notable_features_in_order() {
        let p = Platform::from_cpuinfo(XEON, Some(2));
        assert_eq!(p.cpu.as_deref(), Some("Intel(R) Xeon(R) Processor"));
        assert_eq!(
            p.cpu_features,
            [
                "avx",
                "avx2",
                "fma",
                "avx512f",
                "avx512bw",
                "avx512_vnni",
                "amx_tile",
                "amx_bf16"
            ]
        );
        assert_eq!(p.cpus, Some(2));
        let a = Platform::from_cpuinfo(ARM, None);
        assert_eq!(a.cpu, None);
        assert_eq!(a.cpu_features, ["asimd", "asimddp", "sve", "i8mm", "bf16"]);
        assert_eq!(Platform::from_cpuinfo("", None), Platform::default());
    }

    #[test]
    fn gpus_from_nvidia_smi_and_a_malformed_answer_adds_nothing() {
        let mut p = Platform::default();
        assert!(p.add_gpus("NVIDIA H100 80GB HBM3, 550.54.15\nNVIDIA H100 80GB HBM3, 550.54.15\n"));
        assert_eq!(p.gpus.len(), 2);
        assert_eq!(p.gpu_driver.as_deref(), Some("550.54.15"));
        let mut q = Platform::default();
        assert!(!q.add_gpus("NVIDIA H100 80GB HBM3\n"));
        assert!(!q.add_gpus(", 550\n"));
        assert_eq!(q, Platform::default());
    }

    #[test]
    fn changes_name_what_moved_and_skip_what_one_side_does_not_know() {
        let mut old = Platform::from_cpuinfo(XEON, Some(2));
        old.add_gpus("NVIDIA H100 80GB HBM3, 550.54.15\n");
        assert!(old.changes_since(&old).is_empty());
        let mut new = old.clone();
        new.cpus = Some(4);
        new.cpu_features.retain(|f| f != "amx_tile");
        new.cpu_features.push("avx512_fp16".into());
        new.add_gpus("NVIDIA H200, 560.35.03\nNVIDIA H200, 560.35.03\n");
        assert_eq!(
            new.changes_since(&old),
            [
                "CPU features −amx_tile +avx512_fp16",
                "2 → 4 CPUs",
                "GPUs 1 × NVIDIA H100 80GB HBM3 → 2 × NVIDIA H200",
                "GPU driver 550.54.15 → 560.35.03",
            ]
        );
        // No GPU list (nvidia-smi missing) and no CPU count: nothing to compare there.
        let bare = Platform {
            cpus: None,
            gpus: Vec::new(),
            gpu_driver: None,
            ..old.clone()
        };
        assert_eq!(
            bare.changes_since(&new),
            ["CPU features −avx512_fp16 +amx_tile"]
        );
        assert!(old.changes_since(&Platform::default()).is_empty());
        // Arm's cpuinfo names no model: its features are compared all the same.
        let arm = Platform::from_cpuinfo(ARM, Some(4));
        let mut arm2 = arm.clone();
        arm2.cpu_features.retain(|f| f != "sve");
        assert_eq!(arm2.changes_since(&arm), ["CPU features −sve"]);
    }
}
