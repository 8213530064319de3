//! The HTTP server of `/metrics` and `/healthz`: hyper (HTTP/1.1) on a Tokio
//! runtime of one thread, apart from the daemon's event loop.
//!
//! The event loop renders a snapshot every 100 ms and hands it over
//! ([`HttpServer::publish`]); the server never touches the daemon's state, so
//! no client can delay a directive or a verdict. What a client can hold is
//! bounded: at most [`MAX_PER_SOURCE`] connections per source address and
//! [`MAX_CONNECTIONS`] in all (a new connection from a source at its limit
//! ends that source's oldest; at the global limit, the oldest of the source
//! holding the most), so one source's flood ends only its own connections
//! and every source's newest request is served; a request's head must
//! arrive within [`HEADER_TIMEOUT`] (slowloris) and a connection ends after
//! [`CONNECTION_TIMEOUT`] whatever it does (a slow reader); one request per
//! connection. So a thousand idle connections, or hundreds trickling a
//! header, from a few sources leave room for the scraper. `/healthz` answers
//! 200 while the loop keeps publishing and 503 once it has not for [`STALL`].

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{header, Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use std::collections::{HashMap, VecDeque};
use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::task::AbortHandle;

/// Connections open at once, from every source together.
pub const MAX_CONNECTIONS: usize = 512;
/// Connections open at once from one source address.
pub const MAX_PER_SOURCE: usize = 8;
/// A request's head (request line and headers) must arrive within this.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(2);
/// A connection ends after this, whatever state it is in.
pub const CONNECTION_TIMEOUT: Duration = Duration::from_secs(5);
/// `/healthz` fails once the loop has not published for this long.
pub const STALL: Duration = Duration::from_secs(2);

struct Snapshot {
    text: Bytes,
    published: Instant,
}

/// Serves the latest snapshot.
pub struct HttpServer {
    shared: Arc<Mutex<Snapshot>>,
    addr: SocketAddr,
}

/// The open connections, per source address, oldest first (ids and the handles
/// that end their tasks); a [`Slot`] takes its entry out when its task ends.
#[derive(Default)]
struct Open {
    per_source: HashMap<IpAddr, VecDeque<(u64, AbortHandle)>>,
    total: usize,
    next_id: u64,
}

impl Open {
    /// Make room for one more connection from `ip`: a source at its limit loses
    /// its oldest connection (so a source's new request is served, and one
    /// source's flood ends only its own connections); at the global limit the
    /// source holding the most loses its oldest.
    fn make_room(&mut self, ip: IpAddr) {
        let full_here = self
            .per_source
            .get(&ip)
            .is_some_and(|q| q.len() >= MAX_PER_SOURCE);
        let victim = if full_here {
            Some(ip)
        } else if self.total >= MAX_CONNECTIONS {
            self.per_source
                .iter()
                .max_by_key(|(_, q)| q.len())
                .map(|(&i, _)| i)
        } else {
            None
        };
        if let Some(v) = victim {
            if let Some((_, h)) = self.per_source.get_mut(&v).and_then(|q| q.pop_front()) {
                h.abort();
                self.total -= 1;
            }
        }
    }

    fn remove(&mut self, ip: IpAddr, id: u64) {
        if let Some(q) = self.per_source.get_mut(&ip) {
            if let Some(i) = q.iter().position(|(x, _)| *x == id) {
                q.remove(i);
                self.total -= 1;
            }
            if q.is_empty() {
                self.per_source.remove(&ip);
            }
        }
    }
}

/// A connection's place in [`Open`], given back when its task ends (or is aborted).
struct Slot {
    open: Arc<Mutex<Open>>,
    ip: IpAddr,
    id: u64,
}

impl Drop for Slot {
    fn drop(&mut self) {
        if let Ok(mut o) = self.open.lock() {
            o.remove(self.ip, self.id);
        }
    }
}

/// The content type of `/metrics` (what `prometheus-client` encodes).
const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

fn text(status: StatusCode, body: Bytes) -> Response<Full<Bytes>> {
    typed(status, body, "text/plain; charset=utf-8")
}

fn typed(status: StatusCode, body: Bytes, content_type: &'static str) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(body));
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static(content_type),
    );
    r
}

fn answer(shared: &Mutex<Snapshot>, req: &Request<Incoming>) -> Response<Full<Bytes>> {
    let (body, published) = match shared.lock() {
        Ok(s) => (s.text.clone(), s.published),
        Err(_) => return text(StatusCode::INTERNAL_SERVER_ERROR, Bytes::new()),
    };
    match (req.method(), req.uri().path()) {
        (&Method::GET, "/metrics") => typed(StatusCode::OK, body, OPENMETRICS),
        (&Method::GET, "/healthz") => {
            let age = published.elapsed();
            if age < STALL {
                text(StatusCode::OK, Bytes::from_static(b"ok\n"))
            } else {
                let why = format!(
                    "stalled: the event loop last reported {:.1} s ago\n",
                    age.as_secs_f64()
                );
                text(StatusCode::SERVICE_UNAVAILABLE, Bytes::from(why))
            }
        }
        _ => text(
            StatusCode::NOT_FOUND,
            Bytes::from_static(b"GET /metrics or GET /healthz\n"),
        ),
    }
}

async fn accept_loop(listener: tokio::net::TcpListener, shared: Arc<Mutex<Snapshot>>) {
    let open = Arc::new(Mutex::new(Open::default()));
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(x) => x,
            Err(_) => {
                // out of descriptors or memory for a moment: try again shortly, never spin
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        let ip = peer.ip();
        let id = match open.lock() {
            Ok(mut o) => {
                o.make_room(ip);
                o.next_id += 1;
                o.next_id
            }
            Err(_) => return,
        };
        let slot = Slot {
            open: open.clone(),
            ip,
            id,
        };
        let shared = shared.clone();
        let task = tokio::spawn(async move {
            let _slot = slot;
            let svc = service_fn(move |req: Request<Incoming>| {
                let r = answer(&shared, &req);
                async move { Ok::<_, Infallible>(r) }
            });
            let conn = http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT)
                .keep_alive(false)
                .serve_connection(TokioIo::new(stream), svc);
            let _ = tokio::time::timeout(CONNECTION_TIMEOUT, conn).await;
        });
        // the runtime has one thread: the task cannot have run (and ended) before this
        if let Ok(mut o) = open.lock() {
            o.per_source
                .entry(ip)
                .or_default()
                .push_back((id, task.abort_handle()));
            o.total += 1;
        }
    }
}

impl HttpServer {
    /// Listen on `addr` and serve from a thread of its own.
    pub fn start(addr: SocketAddr) -> std::io::Result<HttpServer> {
        let listener = std::net::TcpListener::bind(addr)?;
        listener.set_nonblocking(true)?;
        let local = listener.local_addr()?;
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .build()?;
        let shared = Arc::new(Mutex::new(Snapshot {
            text: Bytes::new(),
            published: Instant::now(),
        }));
        let s = shared.clone();
        std::thread::Builder::new().name("http".into()).spawn(move || {
            rt.block_on(async move {
                if let Ok(l) = tokio::net::TcpListener::from_std(listener) {
                    accept_loop(l, s).await;
                }
            })
        })?;
        Ok(HttpServer { shared, addr: local })
    }

    /// The address it listens on (the port the kernel chose for port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Replace the served snapshot (and mark the loop alive).
    pub fn publish(&self, text: String) {
        if let Ok(mut s) = self.shared.lock() {
            s.text = Bytes::from(text);
            s.published = Instant::now();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::net::TcpStream;

    fn get(addr: SocketAddr, path: &str) -> String {
        let mut c = TcpStream::connect(addr).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        write!(c, "GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        let mut s = String::new();
        c.read_to_string(&mut s).unwrap();
        s
    }

    /// A connection to `to` from source address `from` (any 127/8 address on loopback).
    fn connect_from(from: &str, to: SocketAddr) -> TcpStream {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .build()
            .unwrap();
        rt.block_on(async {
            let s = tokio::net::TcpSocket::new_v4().unwrap();
            s.bind(format!("{from}:0").parse().unwrap()).unwrap();
            let c = s.connect(to).await.unwrap();
            c.into_std().unwrap()
        })
    }

    /// Whether the server has closed `c` (reads EOF or a reset within `wait`).
    fn closed(c: &TcpStream, wait: Duration) -> bool {
        c.set_nonblocking(false).unwrap();
        c.set_read_timeout(Some(wait)).unwrap();
        let mut b = [0u8; 512];
        let mut r = c;
        loop {
            match r.read(&mut b) {
                Ok(0) => return true,
                Ok(_) => continue, // an answer (408 or the like) before the close
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return true,
                Err(_) => return false, // timed out: still open
            }
        }
    }

    /// Whether `c` is still open this moment (no EOF or reset waiting to be read).
    fn open_now(c: &TcpStream) -> bool {
        c.set_nonblocking(true).unwrap();
        let mut b = [0u8; 64];
        let mut r = c;
        match r.read(&mut b) {
            Ok(0) => false,
            Ok(_) => true,
            Err(e) => e.kind() == std::io::ErrorKind::WouldBlock,
        }
    }

    #[test]
    fn answers_metrics_healthz_and_404() {
        let srv = HttpServer::start("127.0.0.1:0".parse().unwrap()).unwrap();
        srv.publish("xco_up 1\n".into());
        let a = srv.local_addr();
        let r = get(a, "/metrics");
        assert!(r.starts_with("HTTP/1.1 200") && r.ends_with("xco_up 1\n"), "{r}");
        assert!(r.contains("application/openmetrics-text; version=1.0.0"), "{r}");
        let r = get(a, "/healthz");
        assert!(r.starts_with("HTTP/1.1 200") && r.ends_with("ok\n"), "{r}");
        assert!(get(a, "/").starts_with("HTTP/1.1 404"));
    }

    #[test]
    fn scrapes_answer_while_1000_idle_and_200_slowloris_connections_are_open() {
        let srv = HttpServer::start("127.0.0.1:0".parse().unwrap()).unwrap();
        srv.publish("xco_up 1\n".into());
        let a = srv.local_addr();
        // 1,000 idle connections from one source, 200 from five others trickling a header
        let idle: Vec<TcpStream> = (0..1000).map(|_| connect_from("127.0.0.2", a)).collect();
        // one source keeps at most MAX_PER_SOURCE of them: each newcomer ended its oldest
        std::thread::sleep(Duration::from_millis(300));
        let open_idle = idle.iter().filter(|c| open_now(c)).count();
        assert!(
            (1..=MAX_PER_SOURCE).contains(&open_idle),
            "{open_idle} idle connections of one source open"
        );
        let mut slow: Vec<TcpStream> = (0..200)
            .map(|i| connect_from(&format!("127.0.1.{}", 1 + i % 5), a))
            .collect();
        for c in &mut slow {
            let _ = c.write_all(b"GET /metrics HTTP/1.1\r\n");
        }
        for round in 0..6 {
            for c in &mut slow {
                let _ = c.write_all(format!("X-{round}: a\r\n").as_bytes());
            }
            let r = get(a, "/metrics");
            assert!(
                r.starts_with("HTTP/1.1 200") && r.ends_with("xco_up 1\n"),
                "round {round}: {r}"
            );
            std::thread::sleep(Duration::from_millis(500));
        }
        // and what a source may keep ends by the header timeout: a trickled head never completes
        std::thread::sleep(HEADER_TIMEOUT);
        assert!(slow.iter().all(|c| closed(c, Duration::from_secs(2))));
        assert!(idle.iter().all(|c| closed(c, Duration::from_secs(2))));
    }
}
