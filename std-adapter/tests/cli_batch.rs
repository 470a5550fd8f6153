//! `mediaslice probe --json-lines`, run as a process over the bundled
//! corpus: one object per input and line, in input order (or not, with
//! `--unordered`, the same lines), each equal to `probe --json` of the
//! same file plus `path`; directories with `-r`, glob patterns, a list on
//! standard input, error lines, and the exit status of `--fail-on-error`.

use serde_json::{Map, Value};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::remux_common::files_under;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_mediaslice"))
}

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/files")
}

fn lines(o: &Output) -> Vec<Map<String, Value>> {
    let text = String::from_utf8(o.stdout.clone()).expect("UTF-8 lines");
    text.lines()
        .map(|l| match serde_json::from_str(l) {
            Ok(Value::Object(m)) => m,
            other => panic!("not a JSON object: {l:?} ({other:?})"),
        })
        .collect()
}

fn path_of(m: &Map<String, Value>) -> &str {
    m["path"].as_str().expect("path is a string")
}

fn error_code(m: &Map<String, Value>) -> Option<&str> {
    m.get("error")
        .map(|e| e["code"].as_str().expect("error.code is a string"))
}

#[test]
fn recursive_walk_is_in_order_and_each_line_is_the_single_probe() {
    let root = corpus();
    let o = bin()
        .args(["probe", "--json-lines", "-r", "-j", "3"])
        .arg(&root)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let got = lines(&o);
    let want = files_under(&root);
    assert!(want.len() > 40, "the corpus holds {} files", want.len());
    let got_paths: Vec<&str> = got.iter().map(path_of).collect();
    let want_paths: Vec<String> = want.iter().map(|p| p.to_str().unwrap().to_owned()).collect();
    assert_eq!(got_paths, want_paths);
    let mut compared = 0;
    for (line, file) in got.iter().zip(&want) {
        let single = bin().args(["probe", "--json"]).arg(file).output().unwrap();
        let mut line = line.clone();
        line.remove("path");
        if single.status.success() {
            let v: Value = serde_json::from_slice(&single.stdout).unwrap();
            assert_eq!(Value::Object(line), v, "{}", file.display());
            compared += 1;
        } else {
            assert!(
                line.contains_key("error"),
                "{}: probe --json failed, the line has no error",
                file.display()
            );
        }
    }
    assert!(compared > 40, "{compared} lines compared with probe --json");
}

#[test]
fn unordered_gives_the_same_lines() {
    let root = corpus();
    let run = |extra: &[&str]| {
        let o = bin()
            .args(["probe", "--json-lines", "-r", "-j", "4"])
            .args(extra)
            .arg(&root)
            .output()
            .unwrap();
        assert!(o.status.success());
        let mut v: Vec<String> = String::from_utf8(o.stdout)
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect();
        v.sort();
        v
    };
    let ordered = run(&[]);
    assert!(!ordered.is_empty());
    assert_eq!(run(&["--unordered"]), ordered);
}

#[test]
fn globs_stdin_lists_and_errors_are_lines() {
    let root = corpus();
    let flac_glob = root.join("flac/*.flac");
    let dir_without_r = root.join("wav");
    let missing = root.join("no/such/file.mp4");
    let no_match = root.join("flac/*.nothing");
    let mut child = bin()
        .args(["probe", "--json-lines", "-j", "2"])
        .arg(&flac_glob)
        .arg(&dir_without_r)
        .arg(&missing)
        .arg(&no_match)
        .arg("-")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let listed = [
        root.join("mp3").join(first_name(&root.join("mp3"))),
        root.join("ogg").join(first_name(&root.join("ogg"))),
    ];
    {
        let mut stdin = child.stdin.take().unwrap();
        for p in &listed {
            writeln!(stdin, "{}", p.display()).unwrap();
        }
        writeln!(stdin).unwrap();
    }
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "errors do not fail the run without --fail-on-error");
    let got = lines(&o);
    let flacs = files_under(&root.join("flac"));
    let mut want: Vec<String> = flacs.iter().map(|p| p.to_str().unwrap().to_owned()).collect();
    want.push(dir_without_r.to_str().unwrap().to_owned());
    want.push(missing.to_str().unwrap().to_owned());
    want.push(no_match.to_str().unwrap().to_owned());
    want.extend(listed.iter().map(|p| p.to_str().unwrap().to_owned()));
    assert_eq!(got.iter().map(path_of).collect::<Vec<_>>(), want);
    let n = flacs.len();
    for m in &got[..n] {
        assert_eq!(error_code(m), None, "{}", path_of(m));
        assert_eq!(m["format"]["format_name"], "flac");
    }
    assert_eq!(error_code(&got[n]), Some("open"), "a directory without -r");
    assert!(got[n]["error"]["message"].as_str().unwrap().contains("-r"));
    assert_eq!(error_code(&got[n + 1]), Some("open"), "a missing file");
    assert_eq!(error_code(&got[n + 2]), Some("open"), "a pattern that matches nothing");
    for m in &got[n + 3..] {
        assert_eq!(error_code(m), None, "{}", path_of(m));
        assert!(m["streams"].as_array().is_some_and(|s| !s.is_empty()));
    }
}

fn first_name(dir: &Path) -> String {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names.remove(0)
}

#[test]
fn fail_on_error_sets_the_status_only_when_an_input_failed() {
    let good = corpus().join("flac").join(first_name(&corpus().join("flac")));
    let junk = std::env::temp_dir().join(format!("mediaslice-batch-{}-junk.bin", std::process::id()));
    std::fs::write(&junk, [0x5Au8; 4096]).unwrap();
    let run = |files: &[&Path]| {
        bin()
            .args(["probe", "--json-lines", "--fail-on-error"])
            .args(files)
            .output()
            .unwrap()
    };
    let ok = run(&[&good]);
    assert_eq!(ok.status.code(), Some(0));
    let bad = run(&[&good, &junk]);
    let _ = std::fs::remove_file(&junk);
    assert_eq!(bad.status.code(), Some(1), "{}", String::from_utf8_lossy(&bad.stderr));
    let got = lines(&bad);
    assert_eq!(got.len(), 2, "every line is written before the status");
    assert_eq!(error_code(&got[0]), None);
    assert!(error_code(&got[1]).is_some(), "junk has an error: {:?}", got[1]);
    // Without the flag the same run succeeds.
    let plain = bin()
        .args(["probe", "--json-lines"])
        .arg(&good)
        .arg(corpus().join("missing.mp4"))
        .output()
        .unwrap();
    assert_eq!(plain.status.code(), Some(0));
}

#[test]
fn many_inputs_need_json_lines() {
    let f = corpus().join("flac").join(first_name(&corpus().join("flac")));
    let o = bin().args(["probe"]).arg(&f).arg(&f).output().unwrap();
    assert_eq!(o.status.code(), Some(64), "a usage error");
    assert!(o.stdout.is_empty());
}

#[test]
fn a_closed_pipe_ends_the_run_quietly() {
    // `| head -1`: the reader goes away after one line; the run must end
    // (not wait on the rest) and not report an error.
    let mut child = bin()
        .args(["probe", "--json-lines", "-r", "-j", "2"])
        .arg(corpus())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut first = [0u8; 1];
    std::io::Read::read_exact(&mut out, &mut first).unwrap();
    assert_eq!(first[0], b'{');
    drop(out);
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
}
