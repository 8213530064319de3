//! Bad scenario files give an error naming the field and the problem.

use xco_sim::scenario::build;

fn err(text: &str) -> String {
    match build(text, None) {
        Ok(_) => panic!("scenario was accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

const OK: &str = r#"
[topology]
kind = "star"
hosts = 2
[[apps]]
kind = "transfer"
src = "h0"
dst = "h1"
bytes = 1000
"#;

#[test]
fn the_reference_scenario_is_valid() {
    build(OK, None).unwrap();
}

#[test]
fn unknown_field_is_named() {
    let e = err(&OK.replace("hosts = 2", "hosts = 2\nhostz = 3"));
    assert!(e.contains("hostz"), "{e}");
    let e = err(&OK.replace("bytes = 1000", "bytes = 1000\ncolour = \"red\""));
    assert!(e.contains("colour"), "{e}");
}

#[test]
fn negative_rate_is_named() {
    let e = err(&OK.replace("hosts = 2", "hosts = 2\nhost_rate = \"-1Gbps\""));
    assert!(
        e.starts_with("topology.host_rate:") && e.contains("positive"),
        "{e}"
    );
    let e = err(&OK.replace("hosts = 2", "hosts = 2\nhost_rate = -5"));
    assert!(e.starts_with("topology.host_rate:"), "{e}");
}

#[test]
fn unknown_topology_is_named() {
    let e = err(&OK.replace("\"star\"", "\"torus\""));
    assert!(e.starts_with("topology.kind:") && e.contains("torus"), "{e}");
}

#[test]
fn other_mistakes_are_named() {
    let cases = [
        (OK.replace("dst = \"h1\"", "dst = \"h9\""), "apps[0].dst"),
        (
            OK.replace("bytes = 1000", "bytes = 1000\nrounds = 3"),
            "apps[0].rounds",
        ),
        (OK.replace("bytes = 1000", ""), "apps[0].bytes"),
        (
            OK.replace("\"transfer\"", "\"bulk\"").replace("bytes = 1000", ""),
            "run.duration_ms",
        ),
        (
            OK.replace("[topology]", "[run]\nmtu_bytes = 100\n[topology]"),
            "run.mtu_bytes",
        ),
        (
            OK.replace("[topology]", "[tcp]\nrto_min_ms = -1\n[topology]"),
            "tcp.rto_min_ms",
        ),
        (
            OK.replace("kind = \"star\"", "kind = \"fat_tree\"\nk = 3"),
            "topology.k",
        ),
    ];
    for (text, field) in cases {
        let e = err(&text);
        assert!(e.starts_with(field), "want {field}, got: {e}");
    }
}
