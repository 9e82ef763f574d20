use super::*;

#[test]
fn finds_programs_on_path() {
    assert!(find_program("bash").is_some());
    assert!(find_program("surely-not-a-program-xyz").is_none());
    assert!(find_program("/bin/sh").is_some());
}

#[test]
fn a_scripts_interpreter_is_found_through_env() {
    let sh = interpreter("#!/usr/bin/env -S sh -e\necho\n").unwrap();
    assert_eq!(sh.file_name().unwrap(), "sh");
    assert_eq!(
        interpreter("#!/opt/venv/bin/python\n").unwrap(),
        Path::new("/opt/venv/bin/python")
    );
    let dir = tempfile::tempdir().unwrap();
    let binary = dir.path().join("tool");
    std::fs::write(&binary, "\x7fELF").unwrap();
    assert_eq!(script_head(&binary), None);
}

#[test]
fn only_absolute_paths_are_taken_from_a_script() {
    let paths = absolute_paths(
        "#!/usr/bin/env bash\nexec \"/home/u/.asdf/bin/asdf\" exec 'claude' \"$@\" # x\nPATH=/a:/b\n",
    );
    assert_eq!(
        paths,
        [
            PathBuf::from("/home/u/.asdf/bin/asdf"),
            PathBuf::from("/a"),
            PathBuf::from("/b")
        ]
    );
}

#[test]
fn an_editable_installs_source_outside_the_venv_is_found() {
    let dir = tempfile::tempdir().unwrap();
    let venv = dir.path().join("venv");
    let site = venv.join("lib/python3.11/site-packages");
    std::fs::create_dir_all(venv.join("bin")).unwrap();
    std::fs::create_dir_all(&site).unwrap();
    std::fs::write(venv.join("bin/llm"), "#!/bin/sh\n").unwrap();
    let source = dir.path().join("src/llm my plugin");
    let pth_folder = dir.path().join("elsewhere");
    std::fs::create_dir_all(&source).unwrap();
    std::fs::create_dir_all(&pth_folder).unwrap();
    // setuptools' editable install: a finder, and PEP 610's record of the source.
    let dist = site.join("llm_my_plugin-0.1.dist-info");
    std::fs::create_dir_all(&dist).unwrap();
    std::fs::write(
        dist.join("direct_url.json"),
        format!(
            r#"{{"dir_info": {{"editable": true}}, "url": "file://{}"}}"#,
            source.display().to_string().replace(' ', "%20")
        ),
    )
    .unwrap();
    std::fs::write(
        site.join("__editable__.llm_my_plugin-0.1.pth"),
        "import __editable___llm_my_plugin_0_1_finder; __editable___llm_my_plugin_0_1_finder.install()\n",
    )
    .unwrap();
    // A plain install records no editable source; a .pth adds a folder.
    let plain = site.join("click-8.0.dist-info");
    std::fs::create_dir_all(&plain).unwrap();
    std::fs::write(
        plain.join("direct_url.json"),
        r#"{"url": "file:///tmp/x.whl", "archive_info": {}}"#,
    )
    .unwrap();
    std::fs::write(
        site.join("extra.pth"),
        format!(
            "# a comment\n{}\n{}\n",
            pth_folder.display(),
            site.display()
        ),
    )
    .unwrap();
    let found = sources_outside(&venv.join("bin/llm"));
    assert_eq!(
        found,
        [
            SourceOutside {
                folder: pth_folder,
                what: "a folder extra.pth puts on Python's path".to_owned(),
            },
            SourceOutside {
                folder: source,
                what: "the source of llm-my-plugin, installed with `pip install -e`".to_owned(),
            },
        ],
        "the site-packages folder itself is inside the installation"
    );
}

#[test]
fn a_virtualenv_leads_to_its_base_python() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("python/bin");
    std::fs::create_dir_all(&base).unwrap();
    std::fs::write(base.join("python3"), "").unwrap();
    let venv = dir.path().join("venv");
    std::fs::create_dir_all(venv.join("bin")).unwrap();
    std::fs::write(
        venv.join("pyvenv.cfg"),
        format!("home = {}\nversion = 3.12\n", base.display()),
    )
    .unwrap();
    assert_eq!(
        virtualenv_base(&venv.join("bin/python")),
        Some(base.join("python3"))
    );
    assert_eq!(virtualenv_base(&base.join("python3")), None);
}
