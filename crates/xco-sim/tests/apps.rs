//! An application defined outside the crate: a two-level aggregation tree.
//! Two workers send to an aggregator, which forwards every byte it receives
//! to the client (receive on one connection, forward on another).

use xco_core::Time;
use xco_sim::app::{App, AppNote, Application, Env, Metric};
use xco_sim::ctx::Ctx;
use xco_sim::scenario::build;
use xco_sim::tcp::table::Roles;

const PER_WORKER: u64 = 50_000;

struct Aggregator {
    id: u32,
    workers: [u32; 2],
    agg: u32,
    client: u32,
    /// (worker end, aggregator end) of each worker's connection.
    down: Vec<(u32, u32)>,
    /// (aggregator end, client end) of the upstream connection.
    up: (u32, u32),
    up_ready: bool,
    pending: u64,
    at_client: u64,
}

impl Application for Aggregator {
    fn kind(&self) -> &'static str {
        "aggregator"
    }
    fn start(&mut self, env: &mut Env) -> Result<(), String> {
        let up = Roles {
            client: "forward",
            server: "ack",
        };
        self.up = env
            .tcp
            .open(env.cx, env.stack, self.id, self.agg, self.client, 99, up)
            .map_err(|e| e.0)?;
        for (i, &w) in self.workers.iter().enumerate() {
            let down = Roles {
                client: "work",
                server: "ack",
            };
            let pair = env
                .tcp
                .open(env.cx, env.stack, self.id, w, self.agg, i as u32, down)
                .map_err(|e| e.0)?;
            self.down.push(pair);
        }
        Ok(())
    }
    fn on_note(&mut self, env: &mut Env, note: AppNote) -> Result<(), String> {
        match note {
            AppNote::Connected { ep, .. } if ep == self.up.0 => {
                self.up_ready = true;
                if self.pending > 0 {
                    env.tcp.write(env.cx, env.stack, self.up.0, self.pending);
                    self.pending = 0;
                }
            }
            AppNote::Connected { ep, .. } if self.down.iter().any(|d| d.0 == ep) => {
                env.tcp.write(env.cx, env.stack, ep, PER_WORKER);
            }
            AppNote::Delivered { ep, bytes, .. } if self.down.iter().any(|d| d.1 == ep) => {
                // received at the aggregator: forward upstream
                if self.up_ready {
                    env.tcp.write(env.cx, env.stack, self.up.0, bytes);
                } else {
                    self.pending += bytes;
                }
            }
            AppNote::Delivered { ep, bytes, .. } if ep == self.up.1 => self.at_client += bytes,
            _ => {}
        }
        Ok(())
    }
    fn on_timer(&mut self, _env: &mut Env, _token: u32) -> Result<(), String> {
        Ok(())
    }
    fn finished(&self) -> bool {
        self.at_client == 2 * PER_WORKER
    }
    fn endless(&self) -> bool {
        false
    }
    fn summary(&self, _cx: &Ctx) -> Vec<Metric> {
        vec![("bytes_at_client", self.at_client as f64)]
    }
}

#[test]
fn an_aggregator_receives_and_forwards() {
    let text = r#"
[topology]
kind = "star"
hosts = 4
[[apps]]
kind = "ping"
src = "h0"
dst = "h1"
count = 1
"#;
    let mut b = build(text, None).unwrap();
    let node = |n: &str| b.sim.cx.net.node(n).unwrap();
    let agg = Aggregator {
        id: b.sim.next_app_id(),
        workers: [node("h2"), node("h3")],
        agg: node("h1"),
        client: node("h0"),
        down: Vec::new(),
        up: (0, 0),
        up_ready: false,
        pending: 0,
        at_client: 0,
    };
    b.sim.add_app(App::Custom(Box::new(agg)), Time::ZERO);
    let stats = b.sim.run().unwrap();
    assert_eq!(stats.stop_reason, "apps_done");
    let app = &b.sim.apps[1];
    assert_eq!(app.kind(), "aggregator");
    assert_eq!(
        app.summary(&b.sim.cx),
        vec![("bytes_at_client", 2.0 * PER_WORKER as f64)]
    );
    let forwarded: u64 = b
        .sim
        .cx
        .net
        .flows
        .iter()
        .filter(|f| f.role == "forward")
        .map(|f| f.app_bytes_delivered)
        .sum();
    assert_eq!(
        forwarded,
        2 * PER_WORKER,
        "every byte crossed the aggregator's upstream connection"
    );
}

#[test]
fn a_bulk_flow_with_a_stop_time_is_removed_then_and_the_run_ends_when_all_have_stopped() {
    let text = r#"
[topology]
kind = "star"
hosts = 3
[[apps]]
kind = "bulk"
src = "h0"
dst = "h2"
stop_ms = 5
[[apps]]
kind = "bulk"
src = "h1"
dst = "h2"
start_ms = 2
stop_ms = 8
[output]
timeseries_bin_us = 1000
"#;
    let sim = crate::support::run(text);
    let end_ms = sim.cx.now.as_secs_f64() * 1e3;
    assert!(
        (8.0..8.5).contains(&end_ms),
        "the run ends at the last stop: {end_ms} ms"
    );
    let first = crate::support::metric(&sim, 0, "goodput_mbps");
    let second = crate::support::metric(&sim, 1, "goodput_mbps");
    // alone for 2 ms then sharing for 3 ms vs sharing for 3 ms then alone for 3 ms
    assert!(first > 500.0 && second > 500.0, "{first} {second}");
    // no flow-0 throughput after its stop (bins ending after 6 ms)
    let late: f64 = crate::support::flow_throughput(&sim)
        .iter()
        .filter(|&&(t_s, id, _)| id == 0 && t_s > 6.0e-3)
        .map(|&(_, _, mbps)| mbps)
        .sum();
    assert_eq!(late, 0.0, "flow 0 sent nothing after its stop");
}
