//! A scenario → its run configuration: which prompts to build ([`DatasetSpec`]) and how to send
//! them ([`RunConfig`]). The one translation, used by `perfgate run` (a scenario from its flags)
//! and by the live runner (a scenario from the suite file).

use std::path::PathBuf;
use std::sync::Arc;

use crate::client::load::{self, RunConfig};
use crate::client::ClientConfig;
use crate::dataset::{defaults, DatasetSpec, PrefixRepetition};
use crate::metrics::MetricsConfig;
use crate::record::ScenarioParams;
use crate::tokenizer::Tokenize;

/// What is not part of a scenario's identity: where the server is, how to talk to it, what to
/// measure, and how the record names itself.
#[derive(Clone)]
pub struct RunSettings {
    /// How to reach the server, and the command's defaults of the request fields a scenario
    /// leaves unset (`temperature`; `ignore_eos` is [`RunSettings::ignore_eos`]).
    pub client: ClientConfig,
    /// The command's default of `ignore_eos` when the scenario leaves it unset. `Some(v)`:
    /// `v`; `None`: ignore EOS for datasets with fixed lengths (random, fixed), as vLLM's
    /// benchmark does.
    pub ignore_eos: Option<bool>,
    pub num_warmups: usize,
    pub metrics: MetricsConfig,
    pub retokenize: bool,
    pub tokenizer: Option<Arc<dyn Tokenize>>,
    /// The model as records name it.
    pub model: String,
    pub backend: String,
    /// The file of file-based datasets (sharegpt, jsonl).
    pub dataset_path: Option<PathBuf>,
}

/// A scenario ready to run.
#[derive(Debug, Clone)]
pub struct ScenarioRun {
    pub dataset: DatasetSpec,
    pub run: RunConfig,
}

/// Turn a scenario (its parameters and seed) into the prompts to build and the run to make. The
/// seed drives both the dataset and the arrival schedule. The scenario is checked here, once
/// for every caller ([`load::check_scenario`]); errors name the field. The run reads the
/// schedule, the cap and the request fields from the scenario itself, so its record names
/// exactly what was run.
pub fn scenario_run(
    params: &ScenarioParams,
    seed: u64,
    s: RunSettings,
) -> Result<ScenarioRun, String> {
    let name = params
        .dataset_name
        .known()
        .ok_or_else(|| format!("unknown dataset `{}`", params.dataset_name))?;
    load::check_scenario(params)?;
    let u32_of = |v: Option<u64>, default: u32, field: &str| -> Result<u32, String> {
        v.map_or(Ok(default), |v| {
            u32::try_from(v).map_err(|_| format!("{field} is too large"))
        })
    };
    let pr = PrefixRepetition::default();
    let dataset = DatasetSpec {
        name,
        path: s.dataset_path,
        num_prompts: usize::try_from(params.num_prompts)
            .map_err(|_| "num_prompts is too large".to_string())?,
        random_input_len: u32_of(params.random_input_len, 0, "random_input_len")?,
        random_output_len: u32_of(params.random_output_len, 0, "random_output_len")?,
        random_range_ratio: params.random_range_ratio.unwrap_or(0.0),
        range_convention: params.range_convention.unwrap_or_default(),
        sharegpt_output_len: match params.sharegpt_output_len {
            Some(v) => Some(u32_of(Some(v), 0, "sharegpt_output_len")?),
            None => None,
        },
        seed,
        random_prefix_len: u32_of(params.random_prefix_len, 0, "random_prefix_len")?,
        prefix_repetition: PrefixRepetition {
            prefix_len: u32_of(
                params.prefix_repetition_prefix_len,
                pr.prefix_len,
                "prefix_len",
            )?,
            suffix_len: u32_of(
                params.prefix_repetition_suffix_len,
                pr.suffix_len,
                "suffix_len",
            )?,
            num_prefixes: u32_of(
                params.prefix_repetition_num_prefixes,
                pr.num_prefixes,
                "num_prefixes",
            )?,
            output_len: u32_of(
                params.prefix_repetition_output_len,
                pr.output_len,
                "output_len",
            )?,
        },
        custom_output_len: u32_of(
            params.custom_output_len,
            defaults::CUSTOM_OUTPUT_LEN,
            "custom_output_len",
        )?,
        spec_bench_output_len: u32_of(
            params.spec_bench_output_len,
            defaults::SPEC_BENCH_OUTPUT_LEN,
            "spec_bench_output_len",
        )?,
        spec_bench_category: params.spec_bench_category.clone(),
        no_oversample: params.no_oversample.unwrap_or(false),
    };
    let mut client = s.client;
    client.ignore_eos = s
        .ignore_eos
        .unwrap_or(params.dataset_name.uses_random_lens());
    let run = RunConfig {
        client,
        num_warmups: s.num_warmups,
        seed,
        metrics: s.metrics,
        retokenize: s.retokenize,
        tokenizer: s.tokenizer,
        model: s.model,
        backend: s.backend,
        params: params.clone(),
    };
    Ok(ScenarioRun { dataset, run })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{DatasetName, RequestRate};

    fn settings() -> RunSettings {
        RunSettings {
            client: ClientConfig::default(),
            ignore_eos: None,
            num_warmups: 0,
            metrics: MetricsConfig::default(),
            retokenize: false,
            tokenizer: None,
            model: "m".into(),
            backend: "vllm".into(),
            dataset_path: None,
        }
    }

    #[test]
    fn a_scenario_becomes_its_dataset_and_run() {
        let p = ScenarioParams {
            dataset_name: DatasetName::Random.into(),
            num_prompts: 7,
            random_input_len: Some(16),
            random_output_len: Some(8),
            request_rate: RequestRate::PerSecond(2.0),
            burstiness: Some(0.5),
            max_concurrency: Some(3),
            ..Default::default()
        };
        let r = scenario_run(&p, 42, settings()).unwrap();
        assert_eq!(r.dataset.name, DatasetName::Random);
        assert_eq!(r.dataset.num_prompts, 7);
        assert_eq!(r.dataset.random_input_len, 16);
        assert_eq!(r.dataset.seed, 42);
        assert_eq!(r.run.seed, 42);
        assert_eq!(r.run.max_concurrency(), Some(3));
        assert_eq!(r.run.burstiness(), 0.5);
        assert!(r.run.client.ignore_eos, "random lengths ignore EOS");
        assert_eq!(r.run.params, p);
        let mut sg = p.clone();
        sg.dataset_name = DatasetName::Sharegpt.into();
        assert!(
            !scenario_run(&sg, 0, settings())
                .unwrap()
                .run
                .client
                .ignore_eos
        );
        let mut other = p;
        other.dataset_name = "sonnet".into();
        let e = scenario_run(&other, 0, settings()).unwrap_err();
        assert_eq!(e, "unknown dataset `sonnet`");
    }
}
