//! Run a scenario file and print its app summaries and flows (a debugging aid).
fn main() {
    let path = std::env::args().nth(1).expect("usage: run SCENARIO.toml");
    let text = std::fs::read_to_string(path).unwrap();
    let t0 = std::time::Instant::now();
    match xco_sim::run_scenario(&text, None) {
        Ok(o) => {
            eprintln!(
                "wall {:?} events {} end {}",
                t0.elapsed(),
                o.stats.events,
                o.stats.end
            );
            print!("{}", o.apps_csv);
            if std::env::var("FLOWS").is_ok() {
                print!("{}", o.flows_csv);
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2)
        }
    }
}
