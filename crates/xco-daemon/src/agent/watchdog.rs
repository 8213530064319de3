//! The agent's watchdog: a hung or dead agent releases its host.
//!
//! An agent that is stopped (SIGSTOP, a debugger), spins in a busy loop, or
//! crashes must not hold its host's traffic. Nothing inside the agent's
//! process can promise that (SIGSTOP stops every thread), and the kernel does
//! not either: as long as the queue's socket is open its packets wait for a
//! verdict, so neither the agent's fail-open nor `--queue-bypass` acts. So the
//! agent starts a small process of its own at start, `xco-daemon
//! agent-watchdog`, which inherits the queue's netlink socket (the same socket,
//! so the kernel takes its configuration and verdicts as the agent's) and
//! two pipes:
//!
//! - **beats**: the agent's loop writes a byte at least every
//!   [`beat_every`] (its wait is bounded by that), one byte `B` at a normal exit.
//! - **releases**: the watchdog tells the agent what it released.
//!
//! With no beat for [`stale_after`] (`fail_open_ms` + [`HANG_SLACK`]) the
//! watchdog **releases the host**, without dropping a packet:
//!
//! 1. it sets the queue's maximum length to 0: with `NFQA_CFG_F_FAIL_OPEN`
//!    the kernel then passes every new packet at once, as if the queue were
//!    full (no rule is changed, nothing is started: one netlink message);
//! 2. it reads the queue's last packet id from
//!    `/proc/net/netfilter/nfnetlink_queue` and accepts every packet the
//!    kernel still holds with one batch verdict up to it (held packets leave
//!    in their order);
//! 3. it tells the agent the id (a record on the releases pipe) and logs
//!    `event=watchdog_release` (at most once a second, with the count).
//!
//! The agent, when it runs again, reads the record before anything else:
//! the packets it held have gone, so it forgets them (counted as released),
//! skips the unread messages of packets up to that id, and sets the queue's
//! length back — it re-takes the gate where it left it, with the same
//! socket, rules and queue (`event=gate_retaken`). The watchdog re-arms on
//! the next beat.
//!
//! If the agent dies (its end of the beats pipe closes without a `B`), the
//! watchdog releases the host the same way, then removes the agent's rules
//! (only its chain `XCO-Q<queue>`, only if the queue is still bound to
//! this socket, so a new agent's rules are never touched) and exits; the
//! kernel then unbinds the queue. At a normal exit (`B`, written before the
//! agent releases what it holds and removes its rules) it exits at once. It
//! keeps SIGTERM and SIGINT blocked, so a signal to the whole process group
//! (systemd's stop, or its clean-up after a crash) cannot end it before it
//! has done its part.
//!
//! The alternative, killing a hung agent so that the kernel unbinds the queue
//! and `--queue-bypass` acts, drops every packet the queue held (the kernel
//! drops them when the socket closes): TCP then waits for its retransmission
//! timer (≥ 200 ms) and held UDP is lost, and the host stays uncoordinated
//! until something restarts the agent. Measured: docs/agent-datapath.md.
//!
//! The watchdog never holds the host itself: it never reads packets or
//! queues any, and releasing only ever passes traffic.

use super::nfnetlink::{Config, NfqSocket};
use super::nfqueue::{self, read_kernel_queue};
use super::verdict::Verdict;
use crate::log::{Level, Logger, Throttle};
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A hang is an agent silent for `fail_open_ms` plus this: its loop and the
/// scheduler's delays on a busy host get this much slack before the host is
/// released (and the release still comes within `fail_open_ms` + 100 ms).
pub const HANG_SLACK: Duration = Duration::from_millis(50);

/// The byte the agent writes at a normal exit.
const BYE: u8 = b'B';
/// The byte of a beat.
const BEAT: u8 = b'.';
/// Bytes of a release record: `R`, then the id up to which every packet was accepted
/// and the packets the kernel held then (both u32, little-endian).
const RECORD_BYTES: usize = 9;

/// How long the agent may be silent before the watchdog releases its host.
pub fn stale_after(fail_open: Duration) -> Duration {
    fail_open + HANG_SLACK
}

/// How often the agent beats: a quarter of the deadline, between 1 and 25 ms.
pub fn beat_every(stale: Duration) -> Duration {
    (stale / 4).clamp(Duration::from_millis(1), Duration::from_millis(25))
}

/// What the watchdog released while the agent was silent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Release {
    /// Every packet up to this kernel id was accepted.
    pub upto: u32,
    /// Packets the kernel held then (and released).
    pub held_pkts: u32,
}

fn encode(r: Release) -> [u8; RECORD_BYTES] {
    let mut b = [0u8; RECORD_BYTES];
    b[0] = b'R';
    b[1..5].copy_from_slice(&r.upto.to_le_bytes());
    b[5..9].copy_from_slice(&r.held_pkts.to_le_bytes());
    b
}

/// The release records in `buf` (whole records only; anything else is skipped).
fn decode(buf: &[u8]) -> Vec<Release> {
    buf.chunks_exact(RECORD_BYTES)
        .filter(|c| c[0] == b'R')
        .map(|c| Release {
            upto: u32::from_le_bytes([c[1], c[2], c[3], c[4]]),
            held_pkts: u32::from_le_bytes([c[5], c[6], c[7], c[8]]),
        })
        .collect()
}

fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as libc::c_int; 2];
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

fn write_all_nb(fd: RawFd, b: &[u8]) -> bool {
    let n = unsafe { libc::write(fd, b.as_ptr().cast(), b.len()) };
    n == b.len() as isize
}

/// The agent's side: its watchdog process and the two pipes.
pub struct Watchdog {
    child: Child,
    beats: OwnedFd,
    releases: OwnedFd,
    every: Duration,
    last_beat: Instant,
    partial: Vec<u8>,
    /// The watchdog process is gone (its end of the releases pipe closed).
    pub gone: bool,
}

impl Watchdog {
    /// Start the watchdog of queue `queue` (socket `nfq`): it releases the host after
    /// `stale` without a beat.
    pub fn spawn(
        queue: u16,
        nfq: BorrowedFd<'_>,
        stale: Duration,
        log_level: &str,
    ) -> Result<Watchdog, String> {
        let (beat_r, beat_w) = pipe().map_err(|e| format!("watchdog: pipe: {e}"))?;
        let (rel_r, rel_w) = pipe().map_err(|e| format!("watchdog: pipe: {e}"))?;
        let keep = [nfq.as_raw_fd(), beat_r.as_raw_fd(), rel_w.as_raw_fd()];
        // this very binary, also if its file was replaced since (an upgrade)
        let mut cmd = Command::new("/proc/self/exe");
        {
            use std::os::unix::process::CommandExt;
            cmd.arg0("xco-daemon");
        }
        cmd.args([
            "agent-watchdog",
            "--queue",
            &queue.to_string(),
            "--stale-us",
            &stale.as_micros().to_string(),
            "--fds",
            &format!("{},{},{}", keep[0], keep[1], keep[2]),
            "--agent-pid",
            &std::process::id().to_string(),
            "--log-level",
            log_level,
        ])
        .stdin(Stdio::null());
        // SAFETY: fcntl is async-signal-safe; it only clears close-on-exec on the three
        // descriptors the watchdog inherits, in the child's own descriptor table
        unsafe {
            use std::os::unix::process::CommandExt;
            cmd.pre_exec(move || {
                for fd in keep {
                    if libc::fcntl(fd, libc::F_SETFD, 0) < 0 {
                        return Err(io::Error::last_os_error());
                    }
                }
                Ok(())
            });
        }
        let child = cmd.spawn().map_err(|e| format!("watchdog: cannot start: {e}"))?;
        drop((beat_r, rel_w)); // the watchdog's ends
        Ok(Watchdog {
            child,
            beats: beat_w,
            releases: rel_r,
            every: beat_every(stale),
            last_beat: Instant::now(),
            partial: Vec::new(),
            gone: false,
        })
    }

    /// The longest the agent's loop may wait between beats.
    pub fn beat_every(&self) -> Duration {
        self.every
    }

    /// Beat if the last beat is older than a tenth of the interval (a cheap check per loop).
    pub fn beat(&mut self, now: Instant) {
        if now.duration_since(self.last_beat) >= self.every / 10 {
            self.last_beat = now;
            // a full pipe means the watchdog has not read for a while: the beat is
            // not needed then (it sees the ones waiting)
            write_all_nb(self.beats.as_raw_fd(), &[BEAT]);
        }
    }

    /// Readable when the watchdog has released the host.
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.releases.as_fd()
    }

    /// The last release the watchdog reported since the previous call, if any.
    pub fn take_release(&mut self) -> Option<Release> {
        let mut buf = [0u8; 512];
        loop {
            let n = unsafe { libc::read(self.releases.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
            match n {
                0 => {
                    self.gone = true;
                    break;
                }
                n if n < 0 => break,
                n => self.partial.extend_from_slice(&buf[..n as usize]),
            }
        }
        let whole = self.partial.len() / RECORD_BYTES * RECORD_BYTES;
        let last = decode(&self.partial[..whole]).pop();
        self.partial.drain(..whole);
        last
    }

    /// The watchdog has exited: collect its status.
    pub fn reap(mut self) {
        let _ = self.child.try_wait();
    }

    /// The agent stops normally: tell the watchdog, and wait for it (at most 2 s).
    pub fn stop(mut self) {
        write_all_nb(self.beats.as_raw_fd(), &[BYE]);
        let deadline = Instant::now() + Duration::from_secs(2);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// How the watchdog process is started (`xco-daemon agent-watchdog`, by the agent).
pub struct WatchdogOpts {
    /// The agent's netfilter queue.
    pub queue: u16,
    /// Release after this long without a beat.
    pub stale: Duration,
    /// Inherited descriptors: the queue's socket, the beats pipe, the releases pipe.
    pub fds: [RawFd; 3],
    /// The agent's process id (for the log).
    pub agent_pid: u32,
    /// Log level.
    pub log_level: Level,
}

/// Why the watchdog released the host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Why {
    Hung,
    Exited,
}

struct Dog {
    sock: NfqSocket,
    portid: u32,
    queue: u16,
    log: Logger,
    throttle: Throttle,
    releases: OwnedFd,
    agent_pid: u32,
}

impl Dog {
    /// Release the host (see the module doc); false if the queue is not (or no longer) the agent's.
    fn release(&mut self, why: Why, silent: Duration) -> bool {
        let ours = read_kernel_queue(self.queue).filter(|q| q.portid == self.portid);
        if ours.is_none() {
            if let Some(n) = self.throttle.event(Instant::now()) {
                self.log.warn(
                    "watchdog_release_skipped",
                    &[
                        ("queue", &self.queue),
                        ("why", &"the queue is not bound to the agent's socket"),
                        ("count", &n),
                    ],
                );
            }
            return false;
        }
        let cfg = self.sock.send_config(self.queue, Config::MaxLen(0));
        // after the length went to 0 no packet is queued: the last id is final
        let q = read_kernel_queue(self.queue).unwrap_or_default();
        let verdict = if q.queued > 0 {
            self.sock
                .send_verdict_now(self.queue, Verdict::UpTo(q.id_sequence))
        } else {
            Ok(())
        };
        let r = Release {
            upto: q.id_sequence,
            held_pkts: q.queued.min(u64::from(u32::MAX)) as u32,
        };
        write_all_nb(self.releases.as_raw_fd(), &encode(r));
        if let Some(n) = self.throttle.event(Instant::now()) {
            let err = match (&cfg, &verdict) {
                (Err(e), _) | (_, Err(e)) => e.to_string(),
                _ => "none".to_string(),
            };
            self.log.warn(
                "watchdog_release",
                &[
                    (
                        "why",
                        &match why {
                            Why::Hung => "agent silent",
                            Why::Exited => "agent exited",
                        },
                    ),
                    ("agent_pid", &self.agent_pid),
                    ("ms_since_beat", &format!("{:.1}", silent.as_secs_f64() * 1e3)),
                    ("queue", &self.queue),
                    ("released_pkts", &r.held_pkts),
                    ("upto_id", &r.upto),
                    ("error", &err),
                    ("count", &n),
                ],
            );
        }
        true
    }
}

/// Run the watchdog process until the agent exits (see the module doc).
pub fn run(o: WatchdogOpts) -> Result<(), String> {
    let log = Logger::new("agent-watchdog", o.log_level);
    for fd in o.fds {
        // SAFETY: the agent passed these three descriptors open; nothing else here owns them
        if unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) } < 0 {
            return Err(format!(
                "watchdog: descriptor {fd}: {}",
                io::Error::last_os_error()
            ));
        }
    }
    let [nfq, beats, releases] = o.fds.map(|fd| unsafe { OwnedFd::from_raw_fd(fd) });
    // SIGTERM and SIGINT stay blocked (the agent blocks them for its signalfd, and the
    // mask is inherited): a signal to the whole group (systemd's stop, a terminal's Ctrl-C,
    // systemd cleaning up after a crashed agent) must not end the watchdog before the
    // agent has said goodbye or the host is released; it exits by itself right after.
    // SIGKILL still ends it.
    // a watchdog late by a scheduler's slice is a host held that much longer
    unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, -10) };
    let sock = NfqSocket::inherited(nfq);
    let portid = sock
        .portid()
        .map_err(|e| format!("watchdog: queue socket: {e}"))?;
    let mut dog = Dog {
        sock,
        portid,
        queue: o.queue,
        log: log.clone(),
        throttle: Throttle::new(Duration::from_secs(1)),
        releases,
        agent_pid: o.agent_pid,
    };
    log.info(
        "watchdog_start",
        &[
            ("agent_pid", &o.agent_pid),
            ("queue", &o.queue),
            ("stale_ms", &format!("{:.1}", o.stale.as_secs_f64() * 1e3)),
        ],
    );
    let mut last_beat = Instant::now();
    let mut released = false;
    let mut buf = [0u8; 4096];
    loop {
        let timeout_ms = if released {
            -1
        } else {
            let left = (last_beat + o.stale).saturating_duration_since(Instant::now());
            left.as_micros().div_ceil(1000).min(i32::MAX as u128) as libc::c_int
        };
        let mut pfd = libc::pollfd {
            fd: beats.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        let n = unsafe { libc::poll(&mut pfd, 1, timeout_ms) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(format!("watchdog: poll: {e}"));
        }
        if n > 0 {
            let got = unsafe { libc::read(beats.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
            if got == 0 {
                // the agent is gone without saying so: release, and remove its rules
                let silent = last_beat.elapsed();
                if dog.release(Why::Exited, silent) {
                    let removed = nfqueue::remove_chain(&format!("XCO-Q{}", o.queue));
                    log.warn(
                        "watchdog_cleanup",
                        &[("queue", &o.queue), ("chain_removed", &removed)],
                    );
                }
                return Ok(());
            }
            if got > 0 {
                if buf[..got as usize].contains(&BYE) {
                    return Ok(());
                }
                last_beat = Instant::now();
                released = false;
            }
            continue;
        }
        if !released && last_beat.elapsed() >= o.stale {
            released = dog.release(Why::Hung, last_beat.elapsed());
            if !released {
                // not our queue (any more): look again a deadline later
                last_beat = Instant::now();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn release_records_round_trip_and_only_whole_ones_count() {
        let a = Release {
            upto: 0xfffffffe,
            held_pkts: 3,
        };
        let b = Release {
            upto: 7,
            held_pkts: 0,
        };
        let mut buf = encode(a).to_vec();
        buf.extend_from_slice(&encode(b));
        assert_eq!(decode(&buf), vec![a, b]);
        assert_eq!(
            decode(&buf[..RECORD_BYTES + 4]),
            vec![a],
            "a partial record waits"
        );
    }

    #[test]
    fn the_deadline_is_fail_open_plus_the_slack_and_beats_come_four_times_within_it() {
        let s = stale_after(Duration::from_millis(10));
        assert_eq!(s, Duration::from_millis(60));
        assert_eq!(beat_every(s), Duration::from_millis(15));
        assert_eq!(
            beat_every(stale_after(Duration::from_secs(60))),
            Duration::from_millis(25)
        );
        assert_eq!(beat_every(Duration::from_micros(100)), Duration::from_millis(1));
    }

    #[test]
    fn a_release_record_reaches_the_agent_through_the_pipe() {
        let (r, w) = pipe().unwrap();
        let rec = Release {
            upto: 41,
            held_pkts: 9,
        };
        assert!(write_all_nb(w.as_raw_fd(), &encode(rec)));
        let mut wd_partial = Vec::new();
        let mut buf = [0u8; 64];
        let n = unsafe { libc::read(r.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        wd_partial.extend_from_slice(&buf[..n as usize]);
        assert_eq!(decode(&wd_partial), vec![rec]);
    }
}
