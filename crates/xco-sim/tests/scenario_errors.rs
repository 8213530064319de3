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
bytes = "1000B"
"#;

#[test]
fn the_reference_scenario_is_valid() {
    build(OK, None).unwrap();
}

#[test]
fn unknown_field_is_named() {
    let e = err(&OK.replace("hosts = 2", "hosts = 2\nhostz = 3"));
    assert!(e.contains("hostz"), "{e}");
    let e = err(&OK.replace("bytes = \"1000B\"", "bytes = \"1000B\"\ncolour = \"red\""));
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
            OK.replace("bytes = \"1000B\"", "bytes = \"1000B\"\nrounds = 3"),
            "apps[0].rounds",
        ),
        (OK.replace("bytes = \"1000B\"", ""), "apps[0].bytes"),
        (
            OK.replace("\"transfer\"", "\"bulk\"")
                .replace("bytes = \"1000B\"", ""),
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

/// `OK` with `extra` lines added to section `[section]` (created first if missing).
fn with(section: &str, extra: &str) -> String {
    if section == "apps" {
        return OK.replace("bytes = \"1000B\"", &format!("bytes = \"1000B\"\n{extra}"));
    }
    if OK.contains(&format!("[{section}]")) {
        return OK.replace(&format!("[{section}]"), &format!("[{section}]\n{extra}"));
    }
    format!("[{section}]\n{extra}\n{OK}")
}

#[test]
fn units_are_case_sensitive_and_a_size_refuses_bits_and_rates() {
    let e = err(&OK.replace("bytes = \"1000B\"", "bytes = \"64Kb\""));
    assert!(
        e.starts_with("apps[0].bytes: \"64Kb\" is bits; a size takes bytes"),
        "{e}"
    );
    let e = err(&with("topology", "switch_buffer = \"1GB/s\""));
    assert!(
        e.starts_with("topology.switch_buffer: \"1GB/s\" is a rate"),
        "{e}"
    );
    let e = err(&with("topology", "host_rate = \"1gbps\""));
    assert!(
        e.starts_with("topology.host_rate:") && e.contains("case-sensitive"),
        "{e}"
    );
    // the same rate in bytes per second is eight times the bits
    let built = build(&with("topology", "host_rate = \"125MB/s\""), None).unwrap();
    assert_eq!(built.sim.cx.net.ports[0].rate_bps, 1_000_000_000);
}

#[test]
fn every_field_that_could_hang_or_exhaust_memory_is_bounded() {
    let xco = |extra: &str| format!("{OK}\n[xco]\ncontroller = \"h1\"\n{extra}\n");
    let cases = [
        (xco("report_interval_ms = 0"), "xco.report_interval_ms"),
        (xco("slice_ms = 1e-9"), "xco.slice_ms"),
        (xco("fail_open_ms = 1e300"), "xco.fail_open_ms"),
        (
            with("output", "timeseries_bin_us = 1e-6"),
            "output.timeseries_bin_us",
        ),
        // so small it would round to no time at all: an error, never "off"
        (
            with("output", "timeseries_bin_us = 1e-9"),
            "output.timeseries_bin_us",
        ),
        (
            with("output", "timeseries_bin_us = -5"),
            "output.timeseries_bin_us",
        ),
        (with("apps", "start_ms = 1e300"), "apps[0].start_ms"),
        (
            OK.replace("kind = \"transfer\"", "kind = \"udp\"")
                .replace("bytes = \"1000B\"", "count = 5\nrate = \"1e30bps\""),
            "apps[0].rate",
        ),
        (
            OK.replace("kind = \"transfer\"", "kind = \"udp\"").replace(
                "bytes = \"1000B\"",
                "count = 5\nrate = \"10Gbps\"\nmessage = \"1B\"",
            ),
            "apps[0].rate",
        ),
        (with("run", "duration_ms = 1e30"), "run.duration_ms"),
        (with("topology", "link_delay_us = 1e20"), "topology.link_delay_us"),
        (
            with("run", "duration_ms = 200000")
                .replace("[topology]", "[output]\ntimeseries_bin_us = 10\n[topology]"),
            "output.timeseries_bin_us",
        ),
        (with("tcp", "rto_max_ms = 1e12"), "tcp.rto_max_ms"),
        (
            with("apps", "bytes = \"1e30B\"").replace("bytes = \"1000B\"\n", ""),
            "apps[0].bytes",
        ),
        (
            OK.replace("kind = \"transfer\"", "kind = \"ping\"")
                .replace("bytes = \"1000B\"", "interval_us = 1")
                .replace("[topology]", "[run]\nduration_ms = 3600000\n[topology]"),
            "apps[0].interval_us",
        ),
        (with("output", "capture_snaplen = 0"), "output.capture_snaplen"),
        (OK.replace("hosts = 2", "hosts = 1000000"), "topology.hosts"),
    ];
    for (text, field) in cases {
        let e = err(&text);
        assert!(e.starts_with(&format!("{field}:")), "want {field}, got: {e}");
    }
}

#[test]
fn a_field_of_another_app_kind_is_rejected_where_it_does_not_apply() {
    let incast = r#"
[topology]
kind = "star"
hosts = 3
[[apps]]
kind = "incast"
client = "h0"
servers = "h1..h2"
sru = "10KB"
rounds = 3
"#;
    build(incast, None).expect("rounds is a field of an incast");
    let e = err(&OK.replace("bytes = \"1000B\"", "bytes = \"1000B\"\nrounds = 3"));
    assert!(e.starts_with("apps[0].rounds:"), "{e}");
    let e = err(&incast.replace("rounds = 3", "rounds = 3\ninterval_us = 5"));
    assert!(e.starts_with("apps[0].interval_us:"), "{e}");
}

#[test]
fn a_reading_error_names_the_key_path() {
    let e = err(&OK.replace("bytes = \"1000B\"", "bytes = \"1000B\"\ncount = \"many\""));
    assert!(e.starts_with("apps[0].count:"), "{e}");
    let e = err(&OK.replace("hosts = 2", "hosts = \"two\""));
    assert!(e.starts_with("topology.hosts:"), "{e}");
    let e = err(&OK.replace("hosts = 2", "hosts = -2"));
    assert!(e.starts_with("topology.hosts:"), "{e}");
}

#[test]
fn a_hundred_thousand_host_star_validates() {
    let text = r#"
[topology]
kind = "star"
hosts = 100000
[[apps]]
kind = "incast"
client = "h0"
servers = "h1..h99999"
sru = "1KB"
[[apps]]
kind = "transfer"
src = "h*"
dst = "h0"
bytes = "1000B"
"#
    .replace("src = \"h*\"", "src = [\"h5\", \"h99999\"]");
    let built = build(&text, None).expect("a 100k-host star is valid");
    assert_eq!(built.sim.apps.len(), 3);
}

#[test]
fn host_model_settings_are_bounded_and_named() {
    let e = err(&OK.replace("[[apps]]", "[host]\ntxqueuelen = 10\n[[apps]]"));
    assert_eq!(e, "host.txqueuelen: must be from 64 to 1000000, got 10");
    let e = err(&OK.replace("[[apps]]", "[host]\nudp_sndbuf = \"1KB\"\n[[apps]]"));
    assert!(e.starts_with("host.udp_sndbuf: must be from 4608"), "{e}");
    let e = err(&OK.replace("[[apps]]", "[host]\ntxqueue = 100\n[[apps]]"));
    assert!(e.contains("txqueue"), "{e}");
    let e = err(&OK.replace("[[apps]]", "[host]\nblocking_udp = 3\n[[apps]]"));
    assert!(e.contains("blocking_udp"), "{e}");
}

const PROFILED: &str = r#"
[run]
profile = "paper"
[topology]
kind = "star"
hosts = 2
[tcp]
initial_cwnd_segments = 10
delayed_ack_timeout_ms = 40
[profiles.paper]
about = "an older simulator's defaults"
tcp = { initial_cwnd_segments = 1, delayed_ack_timeout_ms = 200 }
run = { mtu_bytes = 576 }
[profiles.modern]
[[apps]]
kind = "transfer"
src = "h0"
dst = "h1"
bytes = "10KB"
"#;

#[test]
fn a_profile_overrides_the_scenarios_settings_key_by_key() {
    let sc = xco_sim::scenario::parse(PROFILED).unwrap();
    assert_eq!(sc.tcp.initial_cwnd_segments, Some(1));
    assert_eq!(sc.tcp.delayed_ack_timeout_ms, Some(200.0));
    assert_eq!(sc.run.mtu_bytes, Some(576));
    let modern = PROFILED.replace("profile = \"paper\"", "profile = \"modern\"");
    let sc = xco_sim::scenario::parse(&modern).unwrap();
    assert_eq!(
        sc.tcp.initial_cwnd_segments,
        Some(10),
        "an empty profile changes nothing"
    );
    assert_eq!(sc.run.mtu_bytes, None);
}

#[test]
fn an_unknown_profile_or_profile_key_is_named() {
    let e = err(&PROFILED.replace("profile = \"paper\"", "profile = \"ns2\""));
    assert!(e.starts_with("run.profile: no profile \"ns2\""), "{e}");
    assert!(e.contains("modern, paper"), "{e}");
    let e = err(&PROFILED.replace("delayed_ack_timeout_ms = 200 }", "delack = 200 }"));
    assert!(e.starts_with("profiles.paper.tcp.delack: unknown field"), "{e}");
}

#[test]
fn an_unknown_pdn_resend_rule_is_named_with_the_choices() {
    let e = err(&format!("{OK}\n[pdn]\nresend = \"twice\"\n"));
    assert!(
        e.starts_with("pdn.resend:") && e.contains("\"twice\"") && e.contains("at-once, once, window"),
        "{e}"
    );
}

#[test]
fn an_unknown_routing_mode_lists_every_mode() {
    let e = err(&OK.replace("hosts = 2", "hosts = 2\nrouting = \"ospf\""));
    assert!(
        e.starts_with("topology.routing:") && e.contains("'ospf'") && e.contains("ecmp-pair"),
        "{e}"
    );
}

#[test]
fn a_fat_tree_k_outside_2_to_96_or_odd_is_named() {
    let ft = |k: i64| {
        format!("[topology]\nkind = \"fat_tree\"\nk = {k}\n[[apps]]\nkind = \"transfer\"\nsrc = \"h0\"\ndst = \"h1\"\nbytes = \"1000B\"\n")
    };
    for k in [0, 7, 98] {
        let e = err(&ft(k));
        assert!(
            e.starts_with("topology.k:")
                && e.contains("even number from 2 to 96")
                && e.contains(&format!("got {k}")),
            "{e}"
        );
    }
    let e = err("[topology]\nkind = \"star\"\nhosts = 250001\n[[apps]]\nkind = \"transfer\"\nsrc = \"h0\"\ndst = \"h1\"\nbytes = \"1000B\"\n");
    assert!(e.starts_with("topology.hosts:") && e.contains("250000"), "{e}");
}

#[test]
fn a_node_name_must_be_an_identifier() {
    // each would break a column: the path column joins names with spaces,
    // selectors read `..` and `*`, links read `->`, CSV cells a comma
    for bad in ["", "a b", "s1,x", "h\\\"1", "1h", "a..b", "h*", "a->b", " h0"] {
        let text = format!(
            "[topology]\nkind = \"explicit\"\n[[topology.nodes]]\nname = \"h0\"\nkind = \"host\"\n\
             [[topology.nodes]]\nname = \"{bad}\"\nkind = \"host\"\n"
        );
        let e = err(&text);
        assert!(
            e.starts_with("topology.nodes[1].name:") && e.contains("not an identifier"),
            "{bad:?}: {e}"
        );
    }
}

#[test]
fn a_rate_or_size_without_a_unit_is_an_error_naming_the_field() {
    let cases = [
        (with("topology", "host_rate = 1000"), "topology.host_rate"),
        (with("topology", "host_rate = 1e9"), "topology.host_rate"),
        (with("topology", "host_rate = \"1000\""), "topology.host_rate"),
        (
            with("topology", "switch_buffer = 300000"),
            "topology.switch_buffer",
        ),
        (OK.replace("bytes = \"1000B\"", "bytes = 1000"), "apps[0].bytes"),
        (
            OK.replace("kind = \"transfer\"", "kind = \"udp\"")
                .replace("bytes = \"1000B\"", "count = 5\nrate = 100000000"),
            "apps[0].rate",
        ),
    ];
    for (text, field) in cases {
        let e = err(&text);
        assert!(
            e.starts_with(&format!("{field}: a bare number")) && e.contains("has no unit"),
            "want {field}, got: {e}"
        );
    }
    // a key that names its unit takes a bare number in that unit
    build(&with("output", "max_file_bytes = 4096"), None).unwrap();
    build(
        &OK.replace("[[apps]]", "[host]\ntsq_limit_bytes = 0\n[[apps]]"),
        None,
    )
    .unwrap();
}
