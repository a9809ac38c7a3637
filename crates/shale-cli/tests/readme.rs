//! Runs the examples of the README's operator section, as written, with
//! the built `shale` first on PATH, in a fresh directory.

use std::path::Path;

/// The fenced `sh` blocks of the README section titled `title`.
fn sh_blocks(readme: &str, title: &str) -> Vec<String> {
    let start = readme
        .find(title)
        .unwrap_or_else(|| panic!("README has no section {title}"));
    let rest = &readme[start + title.len()..];
    let section = &rest[..rest.find("\n## ").unwrap_or(rest.len())];
    let mut blocks = Vec::new();
    let mut lines = section.lines();
    while let Some(line) = lines.next() {
        if line.trim() == "```sh" {
            let body: Vec<&str> = lines.by_ref().take_while(|l| l.trim() != "```").collect();
            blocks.push(body.join("\n"));
        }
    }
    blocks
}

#[test]
fn readme_operator_examples_run_as_written() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md"))
            .unwrap();
    let blocks = sh_blocks(&readme, "## Operating a database with `shale`");
    assert!(blocks.len() >= 5, "found {} sh blocks", blocks.len());
    let bin = assert_cmd::cargo::cargo_bin("shale");
    let bin_dir = bin.parent().unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let tmp = tempfile::tempdir().unwrap();
    for block in blocks {
        let out = std::process::Command::new("sh")
            .arg("-ec")
            .arg(&block)
            .current_dir(tmp.path())
            .env("PATH", &path)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "README example failed ({}):\n{block}\nstdout:\n{}\nstderr:\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
