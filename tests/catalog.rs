//! Data-driven catalog compiler tests. Every `tests/catalog/cases/NAME.pp`
//! is compiled for node `node1` with `tests/catalog/facts.json`, modulepath
//! `tests/catalog/modules` (plus Debian's `/usr/share/puppet/modules` when
//! present) and environment `tests/catalog/env/production`. The result is
//! compared with `NAME.json` (Puppet 7's normalized catalog, recorded by
//! `compare.py --record`) or `NAME.err` (Puppet's error message). Cases listed
//! in `known_failures.txt` may differ; everything else must agree.
//!
//! Each case is a test of its own, named `case::NAME` (libtest-mimic, so
//! `cargo test --test catalog -- case::NAME` runs one); cases that need
//! Debian's modules are ignored when they are not installed.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use ferry::catalog::{
    Catalog, CompileOptions, CompileRequest, ManifestSource, compile, compile_with_options,
};
use libtest_mimic::{Arguments, Failed, Trial};
use serde_json::{Value, json};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/catalog")
}

/// Debian's packaged modules (stdlib, ntp, apt, concat...) used by some cases.
const SYSTEM_MODULES: &str = "/usr/share/puppet/modules";

/// Cases that need `SYSTEM_MODULES` beyond what their expectation shows.
const NEEDS_SYSTEM_MODULES: &[&str] = &[
    "module_core_types",
    "stdlib_functions",
    "functions_monit_ssh_natives",
    "err_monit_validate_tests",
    "assert_type_lambda_types",
    "functions_nexus_parseyaml",
    "err_stdlib_concat_not_array",
    "stdlib_string_helpers",
    "err_stdlib_union_not_array",
    "err_stdlib_swapcase_type",
    "err_stdlib_validate_slength_too_long",
    "err_stdlib_validate_slength_bad_max",
    "err_stdlib_start_with_not_string",
    "err_stdlib_shell_join_not_array",
    "err_stdlib_unix2dos_type",
    "stdlib_validators_b",
    "err_stdlib_seeded_rand_seed",
    "err_stdlib_seeded_rand_zero",
    "err_stdlib_to_bytes_prefix",
    "stdlib_to_ruby_xml",
    "err_stdlib_xml_encode_type",
    "stdlib_shuffle",
    "err_stdlib_shuffle_type",
    "stdlib_str2saltedsha512",
    "err_stdlib_str2saltedsha512_type",
    "stdlib_time",
    "stdlib_shell_split",
    "err_stdlib_shell_split_unmatched",
    "err_stdlib_shell_split_arguments",
    "stdlib_try_get_value",
    "stdlib_to_yaml",
    "err_stdlib_to_yaml_line_width",
    "err_stdlib_to_yaml_indentation",
    "err_stdlib_to_yaml_options",
    "stdlib_to_toml",
    "err_stdlib_to_toml_type",
    "stdlib_parsehocon",
    "err_stdlib_parsehocon_syntax",
    "err_stdlib_parsehocon_list_root",
    "err_stdlib_parsehocon_unresolved",
    "err_stdlib_parsehocon_type",
    "err_stdlib_try_get_value_arguments",
    "err_stdlib_time_arguments",
    "err_stdlib_validate_domain_name_bad",
    "err_stdlib_validate_domain_name_not_string",
    "err_stdlib_validate_email_address_bad",
    "err_stdlib_validate_ip_address_bad",
    "err_stdlib_validate_ip_address_none",
    "err_stdlib_validate_ipv4_address_v6",
    "err_stdlib_validate_ipv6_address_v4",
    "stdlib_numbers_arrays",
    "err_stdlib_num2bool",
    "err_stdlib_clamp",
    "err_stdlib_join_keys_to_values",
    "err_stdlib_intersection",
    "err_stdlib_any2bool",
    "err_stdlib_delete_values",
    "err_stdlib_difference",
    "err_stdlib_dos2unix",
    "err_stdlib_is_float",
    "stdlib_escape_ip",
    "err_stdlib_convert_base",
    "err_stdlib_convert_base_digits",
    "err_stdlib_enclose_ipv6",
    "err_stdlib_enclose_ipv6_type",
    "err_stdlib_is_a",
    "err_stdlib_os_version_gte",
    "stdlib_regex_uuid_interfaces",
    "err_stdlib_delete_regex",
    "err_stdlib_fqdn_uuid",
    "err_stdlib_has_interface_with",
    "err_stdlib_has_ip_address",
    "stdlib_loadjson_loadyaml",
    "stdlib_pson_metadata",
    "err_stdlib_load_module_metadata",
    "err_stdlib_parsepson",
    "err_stdlib_parsepson_scalar",
    "stdlib_is_function_available",
    "stdlib_pw_hash",
    "err_stdlib_pw_hash_arguments",
    "err_stdlib_pw_hash_bcrypt_salt",
    "err_stdlib_pw_hash_empty_salt",
    "err_stdlib_pw_hash_hash_type",
    "err_stdlib_pw_hash_null_byte",
    "err_stdlib_pw_hash_password",
    "err_stdlib_pw_hash_salt_chars",
    "err_stdlib_pw_hash_salt_type",
    "err_stdlib_pw_hash_unknown_type",
    "stdlib_str2saltedpbkdf2",
    "err_stdlib_str2saltedpbkdf2_arguments",
    "err_stdlib_str2saltedpbkdf2_iterations",
    "err_stdlib_str2saltedpbkdf2_password",
    "err_stdlib_str2saltedpbkdf2_range",
    "err_stdlib_str2saltedpbkdf2_salt",
    "err_stdlib_str2saltedpbkdf2_short_salt",
    "stdlib_validate_x509_rsa_key_pair",
    "err_stdlib_validate_x509_rsa_key_pair_arguments",
    "err_stdlib_validate_x509_rsa_key_pair_certificate_base64",
    "err_stdlib_validate_x509_rsa_key_pair_certificate_der",
    "err_stdlib_validate_x509_rsa_key_pair_certificate_end",
    "err_stdlib_validate_x509_rsa_key_pair_ec_certificate",
    "err_stdlib_validate_x509_rsa_key_pair_ec_key",
    "err_stdlib_validate_x509_rsa_key_pair_ec_sec1_key",
    "err_stdlib_validate_x509_rsa_key_pair_ed25519_key",
    "err_stdlib_validate_x509_rsa_key_pair_key_as_certificate",
    "err_stdlib_validate_x509_rsa_key_pair_no_certificate",
    "err_stdlib_validate_x509_rsa_key_pair_not_a_key",
    "err_stdlib_validate_x509_rsa_key_pair_not_string",
    "err_stdlib_validate_x509_rsa_key_pair_other_key",
    "err_stdlib_validate_x509_rsa_key_pair_own_key_ca_signed",
    "err_stdlib_glob_arguments",
    "err_stdlib_glob_element",
    "err_stdlib_glob_type",
    "err_stdlib_validate_augeas_arguments",
    "err_stdlib_validate_augeas_bad_path",
    "err_stdlib_validate_augeas_parse",
    "err_stdlib_validate_augeas_paths_string",
    "err_stdlib_validate_augeas_restriction",
    "err_stdlib_validate_cmd_arguments",
    "err_stdlib_validate_cmd_fails",
    "err_stdlib_validate_cmd_message",
    "err_stdlib_validate_cmd_missing",
    "err_stdlib_validate_cmd_not_string",
    "err_stdlib_validate_numeric_arguments",
    "err_stdlib_validate_numeric_bad_max",
    "err_stdlib_validate_numeric_bad_min",
    "err_stdlib_validate_numeric_element",
    "err_stdlib_validate_numeric_hash",
    "err_stdlib_validate_numeric_max",
    "err_stdlib_validate_numeric_min",
    "err_stdlib_validate_numeric_none",
    "err_stdlib_validate_numeric_order",
    "err_stdlib_validate_numeric_string",
    "stdlib_glob",
    "stdlib_validate_augeas",
    "stdlib_validate_cmd",
    "stdlib_validate_numeric",
    "err_stdlib_validate_integer_bad_max",
    "err_stdlib_validate_numeric_array_max",
    "err_stdlib_defined_with_params_array_reference",
    "err_stdlib_defined_with_params_boolean_reference",
    "err_stdlib_defined_with_params_false_reference",
    "err_stdlib_defined_with_params_integer_params",
    "err_stdlib_defined_with_params_no_reference",
    "err_stdlib_defined_with_params_not_a_reference",
    "err_stdlib_defined_with_params_string_params",
    "err_stdlib_defined_with_params_undef_reference",
    "err_stdlib_defined_with_params_untitled_class",
    "err_stdlib_private_class",
    "err_stdlib_private_define",
    "err_stdlib_private_message",
    "err_stdlib_private_two_arguments",
    "err_stdlib_private_undef_message",
    "err_stdlib_pry",
    "err_stdlib_str2resource_declared_later",
    "err_stdlib_str2resource_missing",
    "err_stdlib_str2resource_missing_class",
    "err_stdlib_str2resource_no_argument",
    "err_stdlib_str2resource_not_a_reference",
    "err_stdlib_str2resource_undef",
    "err_stdlib_str2resource_unknown_type",
    "err_stdlib_type3x_arity",
    "err_stdlib_type3x_unknown",
    "functions_call",
    "stdlib_defined_with_params",
    "stdlib_defined_with_params_order",
    "stdlib_private",
    "stdlib_str2resource",
    "stdlib_type3x",
    "stdlib_ensure_resource_matching",
    "err_ensure_resource_case",
    "err_ensure_resource_in_define",
    "stdlib_defined_with_params_aliases",
    "functions_call_deferred",
    "err_stdlib_str2resource_reference",
    "archive_parse_artifactory_url",
    "collectd_collectd_convert_processes",
    "dns_get_in_addr_arpa",
    "err_archive_parse_artifactory_url",
    "err_collectd_collectd_convert_processes",
    "err_collectd_collectd_convert_processes_type",
    "err_dns_date",
    "err_dns_get_in_addr_arpa",
    "err_inifile_create_ini_settings",
    "err_inifile_create_ini_settings_path_section",
    "err_inifile_create_ini_settings_section",
    "err_mongodb_mongodb_password",
    "err_murano_get_ext_net_name",
    "err_murano_get_ext_net_name_l2",
    "err_nova_to_array_of_json_strings",
    "err_nova_to_array_of_json_strings_type",
    "err_openstacklib_os_database_connection",
    "err_openstacklib_os_database_connection_host",
    "err_openstacklib_os_database_connection_port",
    "err_postgresql_postgresql_acls_to_resources_hash",
    "inifile_create_ini_settings",
    "ironic_ipv6_normalize_dnsmasq_ip_subnets",
    "mongodb_mongodb_password",
    "murano_get_ext_net_name",
    "nova_to_array_of_json_strings",
    "openstacklib_inet6_prefix",
    "openstacklib_os_database_connection",
    "postgresql_postgresql_acls_to_resources_hash",
    "openssl_cert_date_valid",
    "err_openssl_cert_date_valid",
    "err_openssl_cert_date_valid_missing",
    "neutron_convert_cert_to_string",
    "err_neutron_convert_cert_to_string",
    "augeas_core_augeas",
    "err_augeas_core_augeas_parse",
    "err_augeas_core_augeas_change",
    "err_augeas_core_augeas_lens",
    "err_augeas_core_augeas_put",
    "err_augeas_core_augeas_lens_change",
    "err_augeas_core_augeas_numeric_path",
    "redis_redisget",
    "err_redis_redisget",
    "err_redis_redisget_type",
    "err_stdlib_ip_in_range_address",
    "err_stdlib_ip_in_range_family",
    "err_stdlib_ip_in_range_length",
    "err_stdlib_ip_in_range_mask",
    "err_stdlib_ip_in_range_type",
    "err_stdlib_ip_in_range_zero",
    "err_stdlib_seeded_rand_string_charset",
    "err_stdlib_seeded_rand_string_length",
    "err_stdlib_sprintf_hash_args",
    "err_stdlib_sprintf_hash_format",
    "err_stdlib_sprintf_hash_integer",
    "err_stdlib_sprintf_hash_key",
    "err_stdlib_sprintf_hash_mixed",
    "stdlib_ip_in_range",
    "stdlib_seeded_rand_string",
    "stdlib_sprintf_hash",
    "stdlib_str2bool",
    "err_stdlib_str2bool_word",
    "err_stdlib_str2bool_type",
    "err_stdlib_str2bool_undef_case",
    "stdlib_to_bytes_values",
    "err_stdlib_to_bytes_space",
    "stdlib_base64_binary",
];

fn rel(root: &Path, s: &str) -> String {
    let prefix = format!("{}/", root.display());
    s.replace(&prefix, "")
}

/// Same normalization as `compare.py`.
fn normalize(root: &Path, cat: &Catalog) -> Value {
    let mut resources: Vec<Value> = cat
        .resources
        .iter()
        .map(|r| {
            let tags: BTreeSet<&String> = r.tags.iter().collect();
            json!({
                "ref": format!("{}[{}]", r.type_name, r.title),
                "tags": tags,
                "file": r.file.as_ref().map(|f| rel(root, f)),
                "line": r.line,
                "exported": r.exported,
                "parameters": r.parameters,
            })
        })
        .collect();
    resources.sort_by(|a, b| a["ref"].as_str().cmp(&b["ref"].as_str()));
    let mut edges: Vec<String> = cat
        .edges
        .iter()
        .map(|e| format!("{} -> {}", e.source, e.target))
        .collect();
    edges.sort();
    let mut classes = cat.classes.clone();
    classes.sort();
    json!({"resources": resources, "edges": edges, "classes": classes})
}

fn run_case(root: &Path, name: &str) -> Result<Value, String> {
    let facts: serde_json::Map<String, Value> = serde_json::from_str(
        &std::fs::read_to_string(root.join("facts.json")).map_err(|e| e.to_string())?,
    )
    .map_err(|e| e.to_string())?;
    let mut modulepath = vec![root.join("modules")];
    let system = PathBuf::from(SYSTEM_MODULES);
    if system.is_dir() {
        modulepath.push(system);
    }
    let req = CompileRequest {
        manifest: ManifestSource::File(root.join("cases").join(format!("{name}.pp"))),
        modulepath: modulepath.into(),
        facts,
        node: "node1".into(),
        environment: Some(root.join("env/production")),
    };
    compile(&req)
        .map(|c| normalize(root, &c))
        .map_err(|e| temp_names(&rel(root, &e.to_string())))
}

/// Same as `compare.py`'s TEMPFILE: the random temp file names
/// validate_cmd prints replaced by a placeholder.
fn temp_names(s: &str) -> String {
    let re = regex::Regex::new(r"(validate_cmd|validate_augeas)\d{8}-\d+-[0-9A-Za-z]+")
        .expect("temp name pattern");
    re.replace_all(s, "${1}TEMPFILE").into_owned()
}

/// The names in `known_failures.txt` (comments after `#`).
fn known_failures(root: &Path) -> BTreeSet<String> {
    std::fs::read_to_string(root.join("known_failures.txt"))
        .unwrap_or_default()
        .lines()
        .map(|l| l.split('#').next().unwrap_or("").trim().to_string())
        .filter(|l| !l.is_empty())
        .collect()
}

/// Every `cases/NAME.pp`, sorted.
fn case_names(root: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root.join("cases"))
        .expect("cases dir")
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            e.file_name()
                .to_str()
                .and_then(|n| n.strip_suffix(".pp"))
                .map(str::to_string)
        })
        .collect();
    names.sort();
    names
}

/// What a case must give: `NAME.json` or `NAME.err`.
fn expectation(root: &Path, name: &str) -> Option<(bool, String)> {
    let json_path = root.join("cases").join(format!("{name}.json"));
    let err_path = root.join("cases").join(format!("{name}.err"));
    std::fs::read_to_string(&json_path)
        .map(|t| (true, t))
        .or_else(|_| std::fs::read_to_string(&err_path).map(|t| (false, t)))
        .ok()
}

/// Whether a case can run here: it needs Debian's modules when its
/// expectation names them or it is listed as needing them.
fn runnable_here(name: &str, expectation: &str) -> bool {
    Path::new(SYSTEM_MODULES).join("stdlib").is_dir()
        || !(expectation.contains(SYSTEM_MODULES) || NEEDS_SYSTEM_MODULES.contains(&name))
}

/// One corpus case: compiles it and compares with Puppet's result; a case
/// in `known_failures.txt` may differ.
fn catalog_case(root: &Path, name: &str, known: bool) -> Result<(), Failed> {
    let Some((is_json, want)) = expectation(root, name) else {
        return Err(format!("case {name} has neither .json nor .err expectation").into());
    };
    let got = run_case(root, name);
    let ok = if is_json {
        let want: Value = serde_json::from_str(&want).map_err(|e| format!("expected json: {e}"))?;
        matches!(&got, Ok(v) if *v == want)
    } else {
        matches!(&got, Err(e) if e.trim() == want.trim())
    };
    if ok || known {
        return Ok(());
    }
    Err(format!(
        "{name}: unexpected disagreement: got {}",
        match &got {
            Ok(v) => v.to_string().chars().take(600).collect::<String>(),
            Err(e) => e.clone(),
        }
    )
    .into())
}

fn main() {
    let args = Arguments::from_args();
    let root = root();
    let known = known_failures(&root);
    let mut trials: Vec<Trial> = case_names(&root)
        .into_iter()
        .map(|name| {
            let runnable =
                expectation(&root, &name).is_none_or(|(_, text)| runnable_here(&name, &text));
            let is_known = known.contains(&name);
            let case_root = root.clone();
            Trial::test(format!("case::{name}"), move || {
                catalog_case(&case_root, &name, is_known)
            })
            .with_ignored_flag(!runnable)
        })
        .collect();
    let plain: [(&str, fn()); 6] = [
        ("inline_code_and_summary", inline_code_and_summary),
        (
            "batch_compiles_every_case_in_one_process",
            batch_compiles_every_case_in_one_process,
        ),
        (
            "batch_reports_bad_lines_and_goes_on",
            batch_reports_bad_lines_and_goes_on,
        ),
        ("hostile_inputs_do_not_panic", hostile_inputs_do_not_panic),
        ("global_hiera_layer", global_hiera_layer),
        (
            "global_hiera_layer_from_the_command_line",
            global_hiera_layer_from_the_command_line,
        ),
    ];
    trials.extend(plain.into_iter().map(|(name, test)| {
        Trial::test(name, move || {
            test();
            Ok(())
        })
    }));
    libtest_mimic::run(&args, trials).exit();
}

/// `normalize` of a catalog as `ferry catalog compile` prints it.
fn normalize_json(root: &Path, doc: &Value) -> Value {
    let empty = Vec::new();
    let list = |key: &str| doc[key].as_array().unwrap_or(&empty).clone();
    let mut resources: Vec<Value> = list("resources")
        .iter()
        .map(|r| {
            let mut tags: Vec<&str> = r["tags"]
                .as_array()
                .unwrap_or(&empty)
                .iter()
                .filter_map(Value::as_str)
                .collect();
            tags.sort();
            tags.dedup();
            json!({
                "ref": format!("{}[{}]", r["type"].as_str().unwrap_or_default(), r["title"].as_str().unwrap_or_default()),
                "tags": tags,
                "file": r["file"].as_str().map(|f| rel(root, f)),
                "line": r["line"],
                "exported": r["exported"],
                "parameters": r.get("parameters").cloned().unwrap_or_else(|| json!({})),
            })
        })
        .collect();
    resources.sort_by(|a, b| a["ref"].as_str().cmp(&b["ref"].as_str()));
    let mut edges: Vec<String> = list("edges")
        .iter()
        .map(|e| {
            format!(
                "{} -> {}",
                e["source"].as_str().unwrap_or_default(),
                e["target"].as_str().unwrap_or_default()
            )
        })
        .collect();
    edges.sort();
    let mut classes: Vec<Value> = list("classes");
    classes.sort_by(|a, b| a.as_str().cmp(&b.as_str()));
    json!({"resources": resources, "edges": edges, "classes": classes})
}

/// Runs `ferry catalog compile --batch FILE` with the corpus's settings;
/// its exit status and answers.
fn run_batch(root: &Path, batch: &Path) -> (std::process::ExitStatus, Vec<Value>) {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_ferry"));
    let mut modulepath = root.join("modules").display().to_string();
    if Path::new(SYSTEM_MODULES).is_dir() {
        modulepath = format!("{modulepath}:{SYSTEM_MODULES}");
    }
    cmd.args(["catalog", "compile", "--batch"])
        .arg(batch)
        .arg("--modulepath")
        .arg(modulepath)
        .arg("--facts")
        .arg(root.join("facts.json"))
        .arg("--node")
        .arg("node1")
        .arg("--environment")
        .arg(root.join("env/production"));
    let out = cmd.output().expect("runs ferry");
    let answers = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("each answer is a line of JSON"))
        .collect();
    (out.status, answers)
}

/// Every recorded case compiled by one `--batch` process (one line each,
/// the command line's facts and node) gives what Puppet 7 gave, as each
/// case does alone: nothing one compile leaves in the process (parsed
/// files, templates, hiera data) changes another's catalog.
fn batch_compiles_every_case_in_one_process() {
    let root = root();
    let known = known_failures(&root);
    let names: Vec<String> = case_names(&root)
        .into_iter()
        .filter(|n| expectation(&root, n).is_some_and(|(_, t)| runnable_here(n, &t)))
        .collect();
    let dir = tempfile::tempdir().expect("tempdir");
    let batch = dir.path().join("cases.jsonl");
    let lines: Vec<String> = names
        .iter()
        .map(|n| json!({"manifest": root.join("cases").join(format!("{n}.pp"))}).to_string())
        .collect();
    std::fs::write(&batch, lines.join("\n")).expect("write the batch");
    let (_, answers) = run_batch(&root, &batch);
    assert_eq!(answers.len(), names.len(), "one answer per line");
    let mut wrong = Vec::new();
    for (name, answer) in names.iter().zip(&answers) {
        let Some((is_json, want)) = expectation(&root, name) else {
            continue;
        };
        let ok = match (&answer["catalog"], &answer["error"]) {
            (doc @ Value::Object(_), _) if is_json => {
                serde_json::from_str::<Value>(&want).ok() == Some(normalize_json(&root, doc))
            }
            (_, Value::String(e)) if !is_json => temp_names(&rel(&root, e)).trim() == want.trim(),
            _ => false,
        };
        if !ok && !known.contains(name) {
            wrong.push(format!(
                "{name}: {}",
                answer.to_string().chars().take(300).collect::<String>()
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "cases --batch got wrong:\n{}",
        wrong.join("\n")
    );
}

/// A line that is not a request gets an error with the batch file, line
/// and column; a compile error stays that line's; the others compile, and
/// the exit code says something failed.
fn batch_reports_bad_lines_and_goes_on() {
    let root = root();
    let dir = tempfile::tempdir().expect("tempdir");
    let batch = dir.path().join("b.jsonl");
    let text = [
        r#"{"code": "notify { 'one': message => $facts['os']['family'] }"}"#,
        "",
        r#"{"code": "notify { 'two': }", "node": 7}"#,
        r#"{"code": "notify { 'three': }", "colour": "red"}"#,
        "not json",
        r#"{"code": "fail('on purpose')", "node": "other"}"#,
        r#"{"code": "notify { 'x': }", "manifest": "/x.pp"}"#,
        r#"{"code": "notify { 'six': message => $facts['k'] }", "facts": {"k": "v"}}"#,
    ]
    .join("\n");
    std::fs::write(&batch, text).expect("write the batch");
    let (status, answers) = run_batch(&root, &batch);
    assert_eq!(status.code(), Some(1), "{answers:?}");
    let at = |i: usize| &answers[i];
    assert_eq!(
        answers.len(),
        7,
        "the empty line gets no answer: {answers:?}"
    );
    let file = batch.display().to_string();
    let message = |i: usize| at(i)["error"].as_str().unwrap_or_default().to_string();
    assert_eq!(at(0)["line"], 1);
    assert_eq!(at(0)["node"], "node1");
    let one = &at(0)["catalog"]["resources"];
    let one = one
        .as_array()
        .and_then(|r| r.iter().find(|r| r["title"] == "one"));
    assert_eq!(
        one.map(|r| r["parameters"]["message"].clone()),
        Some(json!("Debian"))
    );
    assert!(
        message(1).starts_with(&format!("{file}:3:")) && message(1).contains("invalid type"),
        "{}",
        message(1)
    );
    assert!(
        message(2).starts_with(&format!("{file}:4:"))
            && message(2).contains("unknown field `colour`"),
        "{}",
        message(2)
    );
    assert_eq!(message(3), format!("{file}:5:2: expected ident"));
    assert_eq!(at(4)["node"], "other");
    assert!(message(4).contains("on purpose"), "{}", message(4));
    assert_eq!(
        message(5),
        format!("{file}:7: give code or manifest, not both")
    );
    assert_eq!(at(6)["line"], 8);
    let six = at(6)["catalog"]["resources"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(
        six.iter()
            .any(|r| r["title"] == "six" && r["parameters"]["message"] == "v"),
        "{six:?}"
    );
}

fn inline_code_and_summary() {
    let req = CompileRequest {
        manifest: ManifestSource::Code("notify { 'hello': message => 'world' }".into()),
        modulepath: Default::default(),
        facts: serde_json::Map::new(),
        node: "n".into(),
        environment: None,
    };
    let cat = compile(&req).expect("compiles");
    assert!(
        cat.resources
            .iter()
            .any(|r| r.type_name == "Notify" && r.title == "hello")
    );
    assert!(cat.summary().contains("Notify[hello]"));
    let j = serde_json::to_value(&cat).expect("serializes");
    assert_eq!(j["catalog_format"], 2);
}

fn hostile_inputs_do_not_panic() {
    let inputs = [
        "(".repeat(5000),
        "[".repeat(5000),
        "$x = ".to_string() + &"-".repeat(5000) + "1",
        "\"${".to_string(),
        "@(END)\nno end".to_string(),
        "class a { include a } include a".to_string(),
        "define d { d { \"x${title}\": } } d { 'y': }".to_string(),
        "function f($x) { f($x) } f(1)".to_string(),
        "$a = [1] $b = $a[99999999999]".to_string(),
        "notify { 'x': message => 9223372036854775807 + 1 }".to_string(),
        "'\\u{ffffffff}'".to_string(),
        "\"\\u{ffffffff}\"".to_string(),
        "$r = 'a' =~ /(/".to_string(),
        "range(1, 99999999999)".to_string(),
        "type A = A $x = 1 =~ A".to_string(),
    ];
    // Inputs that double a value on every step or copy one value into every
    // resource: each must stop at the size bounds with an error.
    let exhausting = [
        "function f($a, $n) { if $n > 0 { f($a + $a, $n - 1) } else { 1 } } f([1], 60)",
        "function f($a, $n) { if $n > 0 { f([$a, $a], $n - 1) } else { 1 } } f(1, 60)",
        "function f($a, $n) { if $n > 0 { f(\"${a}${a}\", $n - 1) } else { 1 } } f('x', 60)",
        "function f($a, $n) { if $n > 0 { f({'x' => $a, 'y' => $a}, $n - 1) } else { 1 } } f(1, 60)",
        "$big = range(1, 100000) range(1, 100000).each |$i| { notify { \"${i}\": message => $big } }",
        "$x = inline_template('<% a = [1] %><% 60.times { a = a + a } %><%= a.size %>')",
        "$x = inline_template('<% a = \"x\" %><% 60.times { a = a + a } %><%= a.size %>')",
        "$x = inline_template('<%= (1..99999999999).to_a.size %>')",
        "$x = inline_template('<%= \"x\" * 99999999999 %>')",
    ];
    for code in exhausting {
        let req = CompileRequest {
            manifest: ManifestSource::Code(code.to_string()),
            modulepath: Default::default(),
            facts: serde_json::Map::new(),
            node: "n".into(),
            environment: None,
        };
        assert!(compile(&req).is_err(), "{code} should fail");
    }
    let inputs = inputs.into_iter().chain([
        format!(
            "$x = inline_template('<%= {}1{} %>')",
            "(".repeat(5000),
            ")".repeat(5000)
        ),
        format!("$x = inline_template('<%= {}1 %>')", "[".repeat(5000)),
        format!("$x = inline_template('<%= {}x %>')", "!".repeat(5000)),
        "$x = inline_template('<% if true %>')".to_string(),
        "$x = inline_template('<%= \"#{\"#{\" %>')".to_string(),
        "$x = inline_template('<% loop do %><% end %>')".to_string(),
        "$x = inline_template('<%= 1 / 0 %><%= 9223372036854775807 + 1 %>')".to_string(),
        "$x = Timespan(9223372036854775807, 9223372036854775807, 9223372036854775807, 9223372036854775807, 9223372036854775807, 9223372036854775807, 9223372036854775807) notice($x + $x)".to_string(),
        "$x = Timespan({days => 9223372036854775807, hours => 9223372036854775807}) notice($x * 1e300)".to_string(),
        "notice(Timestamp(1e300)) notice(Timespan(-1e17) - Timespan(1e17))".to_string(),
        "notice(Timestamp('9999999-01-01')) notice(Timespan('999999999999-23:59:59.9999999999'))".to_string(),
        "notice(SemVer('99999999999999999999999.1.1')) notice(SemVer(9223372036854775807, 0, 0) < SemVer('1.0.0'))".to_string(),
        "notice(SemVer('1.0.0') =~ SemVerRange('^99999999999999999999.x || ~18446744073709551615'))".to_string(),
        "notice(Deferred('x', [Deferred('y', [[[[1]]]])]))".to_string(),
    ]);
    for code in inputs {
        let req = CompileRequest {
            manifest: ManifestSource::Code(code.clone()),
            modulepath: Default::default(),
            facts: serde_json::Map::new(),
            node: "n".into(),
            environment: None,
        };
        if let Err(e) = compile(&req) {
            assert!(!e.to_string().contains("panicked"), "{code}: {e}");
        }
    }
}

/// The global hiera case: the corpus root, its folder, the request and
/// the options that name its hiera.yaml.
fn global_hiera_request() -> (PathBuf, PathBuf, CompileRequest, CompileOptions) {
    let root = root();
    let dir = root.join("global_hiera");
    let facts: serde_json::Map<String, Value> =
        serde_json::from_str(&std::fs::read_to_string(root.join("facts.json")).expect("facts"))
            .expect("facts json");
    let req = CompileRequest {
        manifest: ManifestSource::File(dir.join("site.pp")),
        modulepath: vec![root.join("modules")].into(),
        facts,
        node: "node1".into(),
        environment: Some(root.join("env/production")),
    };
    let opts = CompileOptions {
        hiera_config: Some(dir.join("hiera.yaml")),
        ..CompileOptions::default()
    };
    (root, dir, req, opts)
}

/// The global hiera layer (`CompileOptions::hiera_config`, Puppet's
/// `hiera_config`) against Puppet 7's catalog for the same files, recorded
/// with `puppet catalog compile --hiera_config tests/catalog/global_hiera/hiera.yaml`.
fn global_hiera_layer() {
    let (root, dir, req, opts) = global_hiera_request();
    let got = compile_with_options(&req, &ferry::lang::loader::FsLoader, &opts)
        .map(|c| normalize(&root, &c))
        .expect("compiles");
    let want: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("expected.json")).expect("expected.json"),
    )
    .expect("expected json");
    assert_eq!(got, want);
}

/// `ferry catalog compile --hiera-config` is the same global layer: its
/// resources are the library's, and without it the lookup fails.
fn global_hiera_layer_from_the_command_line() {
    let (root, dir, req, opts) = global_hiera_request();
    let run = |with_global: bool| {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_ferry"));
        cmd.args(["catalog", "compile", "--node", "node1", "--manifest"])
            .arg(dir.join("site.pp"))
            .arg("--modulepath")
            .arg(root.join("modules"))
            .arg("--facts")
            .arg(root.join("facts.json"))
            .arg("--environment")
            .arg(root.join("env/production"));
        if with_global {
            cmd.arg("--hiera-config").arg(dir.join("hiera.yaml"));
        }
        cmd.output().expect("runs ferry")
    };
    let library =
        compile_with_options(&req, &ferry::lang::loader::FsLoader, &opts).expect("compiles");
    let library = serde_json::to_value(&library).expect("json")["resources"].clone();
    let global = run(true);
    assert!(global.status.success(), "{global:?}");
    let doc: Value = serde_json::from_slice(&global.stdout).expect("catalog json");
    assert_eq!(doc["resources"], library);
    // Without it, the key only the global layer holds is not found.
    let without = run(false);
    assert!(!without.status.success());
    assert!(
        String::from_utf8_lossy(&without.stderr).contains("'global_only'"),
        "{without:?}"
    );
}
