//! The message seam (`app::messages`): boundaries known to the receiver,
//! each message handed over once, a hub that receives and forwards, also
//! when the network drops packets.

use std::sync::{Arc, Mutex};
use xco_core::Time;
use xco_sim::app::messages::{ConnPool, Messages};
use xco_sim::app::{App, AppNote, Application, Env, Metric};
use xco_sim::ctx::Ctx;
use xco_sim::scenario::build;

#[derive(Clone, Debug)]
enum Msg {
    /// Ask a worker for objects `first..first + n`.
    Query { first: u32, n: u32 },
    /// One object, `id`.
    Object { id: u32 },
}

/// The client asks a hub for objects of two workers; the hub forwards the
/// queries and streams every object the workers return to the client.
struct HubApp {
    id: u32,
    client: u32,
    hub: u32,
    workers: [u32; 2],
    per_worker: u32,
    object_bytes: u64,
    msgs: Messages<Msg>,
    pool: ConnPool,
    got: Arc<Mutex<Vec<u32>>>,
    buf: Vec<Msg>,
}

impl HubApp {
    fn ep(&mut self, env: &mut Env, a: u32, b: u32) -> u32 {
        self.pool.endpoint(env, self.id, a, b).unwrap()
    }
}

impl Application for HubApp {
    fn kind(&self) -> &'static str {
        "hub_test"
    }
    fn start(&mut self, env: &mut Env) -> Result<(), String> {
        let ep = self.ep(env, self.client, self.hub);
        for (w, first) in [(0u32, 0u32), (1, self.per_worker)] {
            self.msgs.send(
                env,
                ep,
                40 + w as u64,
                Msg::Query {
                    first,
                    n: self.per_worker,
                },
            );
        }
        Ok(())
    }
    fn on_note(&mut self, env: &mut Env, note: AppNote) -> Result<(), String> {
        let AppNote::Delivered { ep, bytes, .. } = note else {
            return Ok(());
        };
        let host = env.tcp.eps[ep as usize].host;
        let mut buf = std::mem::take(&mut self.buf);
        buf.clear();
        self.msgs.on_delivered(ep, bytes, &mut buf);
        for m in buf.drain(..) {
            match m {
                Msg::Query { first, n } if host == self.hub => {
                    let w = self.workers[(first / self.per_worker) as usize];
                    let e = self.ep(env, self.hub, w);
                    self.msgs.send(env, e, 40, Msg::Query { first, n });
                }
                Msg::Query { first, n } => {
                    let e = self.ep(env, host, self.hub);
                    for id in first..first + n {
                        self.msgs
                            .send(env, e, self.object_bytes + id as u64 % 7, Msg::Object { id });
                    }
                }
                Msg::Object { id } if host == self.hub => {
                    let e = self.ep(env, self.hub, self.client);
                    self.msgs
                        .send(env, e, self.object_bytes + id as u64 % 7, Msg::Object { id });
                }
                Msg::Object { id } => {
                    assert_eq!(host, self.client);
                    self.got.lock().unwrap().push(id);
                }
            }
        }
        self.buf = buf;
        Ok(())
    }
    fn on_timer(&mut self, _env: &mut Env, _token: u32) -> Result<(), String> {
        Ok(())
    }
    fn finished(&self) -> bool {
        self.got.lock().unwrap().len() == 2 * self.per_worker as usize
    }
    fn endless(&self) -> bool {
        false
    }
    fn summary(&self, _cx: &Ctx) -> Vec<Metric> {
        vec![("objects_at_client", self.got.lock().unwrap().len() as f64)]
    }
}

fn run_hub(switch_buffer: &str, per_worker: u32, object_bytes: u64) -> (Vec<u32>, u64) {
    let text = format!(
        r#"
[topology]
kind = "star"
hosts = 4
switch_buffer = "{switch_buffer}"
[tcp]
rto_min_ms = 10
rto_initial_ms = 10
[[apps]]
kind = "ping"
src = "h0"
dst = "h1"
count = 1
"#
    );
    let mut b = build(&text, None).unwrap();
    let node = |n: &str| b.sim.cx.net.node(n).unwrap();
    let got = Arc::new(Mutex::new(Vec::new()));
    let app = HubApp {
        id: b.sim.next_app_id(),
        client: node("h0"),
        hub: node("h1"),
        workers: [node("h2"), node("h3")],
        per_worker,
        object_bytes,
        msgs: Messages::new(),
        pool: ConnPool::new(),
        got: got.clone(),
        buf: Vec::new(),
    };
    b.sim.add_app(App::Custom(Box::new(app)), Time::ZERO);
    let stats = b.sim.run().unwrap();
    assert_eq!(stats.stop_reason, "apps_done");
    let drops: u64 = b.sim.cx.net.ports.iter().map(|p| p.stats.dropped_packets).sum();
    let got = got.lock().unwrap().clone();
    (got, drops)
}

#[test]
fn a_hub_forwards_every_message_once_and_the_client_sees_every_object() {
    let (got, drops) = run_hub("1MB", 300, 500);
    assert_eq!(drops, 0, "a large buffer drops nothing");
    each_once(&got, 600);
    // each worker's objects arrive in the order it sent them
    for w in 0..2u32 {
        let seq: Vec<u32> = got.iter().copied().filter(|&id| id / 300 == w).collect();
        assert!(
            seq.windows(2).all(|p| p[0] < p[1]),
            "worker {w}'s objects in order"
        );
    }
}

#[test]
fn messages_survive_drops_and_timeouts() {
    let (got, drops) = run_hub("6KB", 400, 900);
    assert!(
        drops > 0,
        "the small buffer must drop for this test to mean anything"
    );
    each_once(&got, 800);
}

fn each_once(got: &[u32], n: u32) {
    let mut seen = vec![0u32; n as usize];
    for &id in got {
        seen[id as usize] += 1;
    }
    assert!(
        seen.iter().all(|&c| c == 1),
        "every object exactly once: {seen:?}"
    );
}
