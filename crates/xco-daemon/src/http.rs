//! The daemons' HTTP endpoints: `GET /metrics` (Prometheus text format
//! 0.0.4) and `GET /healthz`.
//!
//! The event loop renders a snapshot every 100 ms and hands it over
//! ([`HttpServer::publish`]); the server never touches the daemon's state, so
//! no client can delay a directive or a verdict. Each connection is served by
//! its own short-lived thread with read and write timeouts (at most
//! [`MAX_CLIENTS`] at once; more are closed at once), so idle or slow clients
//! do not hold up the others. `/healthz` answers 200 while the loop keeps
//! publishing and 503 once it has not for [`STALL`].

use std::fmt::Write as _;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use xco_core::Dur;

/// Most connections served at once.
pub const MAX_CLIENTS: usize = 64;
/// A client must send its request, and take the answer, within this.
pub const CLIENT_TIMEOUT: Duration = Duration::from_secs(2);
/// `/healthz` fails once the loop has not published for this long.
pub const STALL: Duration = Duration::from_secs(2);

struct Shared {
    text: Arc<String>,
    published: Instant,
}

/// Serves the latest snapshot.
pub struct HttpServer {
    shared: Arc<Mutex<Shared>>,
}

fn serve(mut conn: TcpStream, shared: &Mutex<Shared>) {
    let _ = conn.set_read_timeout(Some(CLIENT_TIMEOUT));
    let _ = conn.set_write_timeout(Some(CLIENT_TIMEOUT));
    let mut req = [0u8; 2048];
    let mut got = 0;
    let deadline = Instant::now() + CLIENT_TIMEOUT;
    while got < req.len() && Instant::now() < deadline {
        match conn.read(&mut req[got..]) {
            Ok(0) | Err(_) => break,
            Ok(n) => got += n,
        }
        if req[..got].windows(4).any(|w| w == b"\r\n\r\n") {
            break;
        }
    }
    let line = String::from_utf8_lossy(&req[..got]);
    let (text, published) = match shared.lock() {
        Ok(s) => (s.text.clone(), s.published),
        Err(_) => return,
    };
    let (status, body): (&str, Arc<String>) = if line.starts_with("GET /metrics ") {
        ("200 OK", text)
    } else if line.starts_with("GET /healthz ") {
        let age = published.elapsed();
        if age < STALL {
            ("200 OK", Arc::new("ok\n".into()))
        } else {
            let why = format!(
                "stalled: the event loop last reported {:.1} s ago\n",
                age.as_secs_f64()
            );
            ("503 Service Unavailable", Arc::new(why))
        }
    } else {
        (
            "404 Not Found",
            Arc::new("GET /metrics or GET /healthz\n".to_string()),
        )
    };
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = conn
        .write_all(head.as_bytes())
        .and_then(|()| conn.write_all(body.as_bytes()));
}

impl HttpServer {
    /// Listen on `addr` and serve from background threads.
    pub fn start(addr: SocketAddr) -> std::io::Result<HttpServer> {
        let listener = TcpListener::bind(addr)?;
        let shared = Arc::new(Mutex::new(Shared {
            text: Arc::new(String::new()),
            published: Instant::now(),
        }));
        let active = Arc::new(AtomicUsize::new(0));
        let s = shared.clone();
        std::thread::Builder::new().name("http".into()).spawn(move || {
            for conn in listener.incoming() {
                let Ok(conn) = conn else { continue };
                if active.fetch_add(1, Ordering::AcqRel) >= MAX_CLIENTS {
                    active.fetch_sub(1, Ordering::AcqRel);
                    continue; // dropped: closed at once
                }
                let (s, a) = (s.clone(), active.clone());
                let spawned = std::thread::Builder::new()
                    .name("http-client".into())
                    .spawn(move || {
                        serve(conn, &s);
                        a.fetch_sub(1, Ordering::AcqRel);
                    });
                if spawned.is_err() {
                    active.fetch_sub(1, Ordering::AcqRel);
                }
            }
        })?;
        Ok(HttpServer { shared })
    }

    /// Replace the served snapshot (and mark the loop alive).
    pub fn publish(&self, text: String) {
        if let Ok(mut s) = self.shared.lock() {
            s.text = Arc::new(text);
            s.published = Instant::now();
        }
    }
}

/// Writes metrics in the Prometheus text format.
#[derive(Default)]
pub struct Prom {
    /// The text so far.
    pub out: String,
}

impl Prom {
    /// One metric: its help, type and `(labels, value)` lines.
    pub fn metric(&mut self, name: &str, kind: &str, help: &str, lines: &[(String, String)]) {
        let _ = writeln!(self.out, "# HELP {name} {help}\n# TYPE {name} {kind}");
        for (labels, v) in lines {
            let _ = writeln!(self.out, "{name}{labels} {v}");
        }
    }

    /// One metric with a single unlabelled value.
    pub fn one(&mut self, name: &str, kind: &str, help: &str, v: impl ToString) {
        self.metric(name, kind, help, &[(String::new(), v.to_string())]);
    }

    /// A histogram in seconds.
    pub fn histogram(&mut self, name: &str, help: &str, h: &Histogram) {
        let mut acc = 0;
        let mut lines: Vec<(String, String)> = BUCKETS_US
            .iter()
            .zip(h.counts)
            .map(|(b, c)| {
                acc += c;
                (format!("_bucket{{le=\"{}\"}}", *b as f64 / 1e6), acc.to_string())
            })
            .collect();
        lines.push(("_bucket{le=\"+Inf\"}".into(), h.n.to_string()));
        lines.push(("_sum".into(), format!("{}", h.sum_ns as f64 / 1e9)));
        lines.push(("_count".into(), h.n.to_string()));
        self.metric(name, "histogram", help, &lines);
    }
}

/// Upper bounds (µs) of the histogram buckets.
pub const BUCKETS_US: [u64; 12] = [
    10, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 50000, 250000, 1000000,
];

/// A latency histogram (fixed buckets, no allocation per sample).
#[derive(Clone, Debug, Default)]
pub struct Histogram {
    counts: [u64; BUCKETS_US.len()],
    sum_ns: u64,
    n: u64,
}

impl Histogram {
    /// Record one duration.
    pub fn record(&mut self, d: Dur) {
        let us = d.as_ns() / 1000;
        if let Some(i) = BUCKETS_US.iter().position(|&b| us <= b) {
            self.counts[i] += 1;
        }
        self.sum_ns = self.sum_ns.saturating_add(d.as_ns());
        self.n += 1;
    }

    /// Upper bound (µs) of the bucket holding quantile `q` (0 if nothing was
    /// recorded; `u64::MAX` above the last bucket).
    pub fn quantile_us(&self, q: f64) -> u64 {
        if self.n == 0 {
            return 0;
        }
        let want = ((q * self.n as f64).ceil() as u64).max(1);
        let mut acc = 0;
        for (i, c) in self.counts.iter().enumerate() {
            acc += c;
            if acc >= want {
                return BUCKETS_US[i];
            }
        }
        u64::MAX
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(addr: SocketAddr, path: &str) -> String {
        let mut c = TcpStream::connect(addr).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        write!(c, "GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        let mut s = String::new();
        c.read_to_string(&mut s).unwrap();
        s
    }

    #[test]
    fn answers_while_30_idle_connections_are_open() {
        let probe = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = probe.local_addr().unwrap();
        drop(probe);
        let srv = HttpServer::start(addr).unwrap();
        srv.publish("xco_up 1\n".into());
        // 30 clients connect and send nothing (and one sends half a request)
        let mut idle: Vec<TcpStream> = (0..30).map(|_| TcpStream::connect(addr).unwrap()).collect();
        idle[0].write_all(b"GET /metr").unwrap();
        let r = get(addr, "/metrics");
        assert!(r.starts_with("HTTP/1.1 200") && r.ends_with("xco_up 1\n"), "{r}");
        let r = get(addr, "/healthz");
        assert!(r.starts_with("HTTP/1.1 200") && r.ends_with("ok\n"), "{r}");
        assert!(get(addr, "/").starts_with("HTTP/1.1 404"));
        drop(idle);
    }

    #[test]
    fn histogram_quantiles_are_bucket_bounds() {
        let mut h = Histogram::default();
        assert_eq!(h.quantile_us(0.5), 0);
        for us in [5, 40, 40, 900] {
            h.record(Dur::from_us(us));
        }
        assert_eq!(h.quantile_us(0.5), 50);
        assert_eq!(h.quantile_us(1.0), 1000);
        h.record(Dur::from_ms(5000));
        assert_eq!(h.quantile_us(1.0), u64::MAX);
    }
}
