"""xco-sim's modules import only their own layer and those below, in no cycle
across top-level modules (`scripts/import_graph.py --check`), and the script
finds what it is meant to find (a planted upward import, a planted cycle)."""

import importlib.util
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "scripts" / "import_graph.py"


def load_script():
    spec = importlib.util.spec_from_file_location("import_graph", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["import_graph"] = mod
    spec.loader.exec_module(mod)
    return mod


def test_the_simulator_has_no_upward_import_and_no_cross_module_cycle():
    r = subprocess.run([sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "upward imports (lower layer -> higher): 0" in r.stdout, r.stdout


def write(root: Path, rel: str, text: str):
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)


def test_a_planted_upward_import_and_cycle_are_reported(tmp_path):
    g = load_script()
    src = tmp_path / "src"
    write(src, "lib.rs", "pub mod engine;\npub mod net;\npub mod tcp;\npub mod sim;\n")
    write(src, "engine.rs", "pub struct Event;\n")
    # net imports sim: upward; sim <-> net: a cycle across modules
    write(src, "net/mod.rs", "mod port;\nuse crate::engine::Event;\nuse crate::sim::{Core, self};\n")
    write(src, "net/port.rs", "use super::Net; // a comment naming crate::sim::Core\n")
    write(src, "tcp/mod.rs", 'pub mod cc;\nuse cc::Cc;\nconst S: &str = "crate::sim::Core";\n')
    # tcp/cc.rs <-> tcp/mod.rs: a cycle inside one module
    write(src, "tcp/cc.rs", "use super::TcpConfig;\nfn f() { let x = crate::engine::Event; }\n")
    write(src, "sim.rs", "use crate::net::Net;\nuse crate::tcp::{cc::Cc, TcpConfig as T};\n")
    layers = [("base", ["engine"]), ("net", ["net"]), ("tcp", ["tcp"]), ("sim", ["sim", "crate"])]
    r = g.analyse(src, layers)
    assert r["modules"] == 7
    edges = {(e["from"], e["to"]): e["names"] for e in r["edges"]}
    assert edges[("net/mod.rs", "sim.rs")] == ["Core", "sim"]
    assert ("net/port.rs", "sim.rs") not in edges  # comments do not count
    assert ("tcp/mod.rs", "sim.rs") not in edges  # nor strings
    assert edges[("tcp/mod.rs", "tcp/cc.rs")] == ["Cc"]
    assert edges[("tcp/cc.rs", "engine.rs")] == ["Event"]
    assert edges[("sim.rs", "tcp/cc.rs")] == ["Cc"]
    assert edges[("sim.rs", "tcp/mod.rs")] == ["TcpConfig"]
    assert [(u["from"], u["to"]) for u in r["upward"]] == [("net/mod.rs", "sim.rs")]
    assert r["cross_module_cycles"] == [["net/mod.rs", "sim.rs"]]
    assert r["in_module_cycles"] == [["tcp/cc.rs", "tcp/mod.rs"]]
    assert g.main(["--src", str(src), "--check"]) == 1  # with the crate's own layers too


def test_a_clean_tree_passes_the_check(tmp_path):
    g = load_script()
    src = tmp_path / "src"
    write(src, "lib.rs", "pub mod engine;\npub mod sim;\n")
    write(src, "engine/mod.rs", "pub mod queue;\npub use queue::Queue;\n")
    write(src, "engine/queue.rs", "pub struct Queue;\n")
    write(src, "sim.rs", "use crate::engine::Queue;\n")
    r = g.analyse(src)
    assert (r["upward"], r["cross_module_cycles"], r["in_module_cycles"]) == ([], [], [])
    assert g.main(["--src", str(src), "--check"]) == 0
