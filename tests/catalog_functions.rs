//! `ferry catalog functions` lists every built-in function with its
//! signature, as a table and as JSON.

use std::process::Command;

fn ferry(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_ferry"))
        .args(args)
        .output()
        .expect("ferry runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

#[test]
fn lists_functions_as_a_table() {
    let text = ferry(&["catalog", "functions"]);
    let mut lines = text.lines();
    assert!(lines.next().is_some_and(|h| h.starts_with("FUNCTION")));
    let split = text
        .lines()
        .find(|l| l.starts_with("split "))
        .expect("split is listed");
    assert!(
        split.contains("strings")
            && split.contains("(String $str, Any $pattern?) >> Array[String]"),
        "{split}"
    );
    let each = text.lines().find(|l| l.starts_with("each ")).expect("each");
    assert!(each.contains("&$block)"), "{each}");
    assert!(!text.contains("__tpl_text"));
    assert!(text.trim_end().ends_with("functions"));
}

#[test]
fn lists_functions_as_json() {
    let json: serde_json::Value =
        serde_json::from_str(&ferry(&["catalog", "functions", "--format", "json"])).expect("JSON");
    let all = json.as_array().expect("an array");
    assert!(all.len() > 100);
    let versioncmp = all
        .iter()
        .find(|f| f["name"] == "versioncmp")
        .expect("versioncmp");
    assert_eq!(versioncmp["family"], "strings");
    assert_eq!(versioncmp["block"], "never");
    assert_eq!(versioncmp["parameters"][0]["type"], "String");
    assert_eq!(versioncmp["parameters"][1]["required"], true);
    let names: Vec<&str> = all.iter().filter_map(|f| f["name"].as_str()).collect();
    for want in [
        "include",
        "lookup",
        "each",
        "template",
        "sprintf",
        "mysql::password",
    ] {
        assert!(names.contains(&want), "{want} is listed");
    }
}
