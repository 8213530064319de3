//! The daemons' event loop: one thread, `epoll` over a few file descriptors,
//! a `timerfd` for the next deadline (nanosecond resolution: a 2-ms timeslice
//! needs better than the millisecond ticks of async runtimes' timers), and a
//! `signalfd` for SIGTERM/SIGINT so shutdown runs in the loop, not in a handler.

use nix::sys::epoll::{Epoll, EpollCreateFlags, EpollEvent, EpollFlags, EpollTimeout};
use nix::sys::signal::{SigSet, Signal};
use nix::sys::signalfd::{SfdFlags, SignalFd};
use nix::sys::time::TimeSpec;
use nix::sys::timerfd::{ClockId, Expiration, TimerFd, TimerFlags, TimerSetTimeFlags};
use std::os::fd::{AsFd, BorrowedFd};
use std::time::{Duration, Instant};
use xco_core::{Dur, Time};

/// Monotonic time since the daemon started, as the core's `Time`.
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    start: Instant,
}

impl Clock {
    /// A clock starting now.
    pub fn new() -> Clock {
        Clock {
            start: Instant::now(),
        }
    }

    /// Now.
    pub fn now(&self) -> Time {
        Time::ZERO + Dur::from_ns(self.start.elapsed().as_nanos() as u64)
    }
}

impl Default for Clock {
    fn default() -> Clock {
        Clock::new()
    }
}

/// What woke the loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wake {
    /// File descriptor registered with this token is readable.
    Readable(u64),
    /// The deadline passed.
    Timer,
    /// SIGTERM or SIGINT.
    Shutdown,
}

const TIMER: u64 = u64::MAX;
const SIGNAL: u64 = u64::MAX - 1;

/// epoll + timerfd + signalfd.
pub struct Poller {
    epoll: Epoll,
    timer: TimerFd,
    signals: SignalFd,
    armed: Option<Time>,
    events: Vec<EpollEvent>,
}

impl Poller {
    /// A poller; blocks SIGTERM/SIGINT for normal delivery (call before starting threads).
    pub fn new() -> nix::Result<Poller> {
        let mut mask = SigSet::empty();
        mask.add(Signal::SIGTERM);
        mask.add(Signal::SIGINT);
        mask.thread_block()?;
        let signals = SignalFd::with_flags(&mask, SfdFlags::SFD_NONBLOCK | SfdFlags::SFD_CLOEXEC)?;
        let timer = TimerFd::new(
            ClockId::CLOCK_MONOTONIC,
            TimerFlags::TFD_NONBLOCK | TimerFlags::TFD_CLOEXEC,
        )?;
        let epoll = Epoll::new(EpollCreateFlags::EPOLL_CLOEXEC)?;
        epoll.add(timer.as_fd(), EpollEvent::new(EpollFlags::EPOLLIN, TIMER))?;
        epoll.add(signals.as_fd(), EpollEvent::new(EpollFlags::EPOLLIN, SIGNAL))?;
        Ok(Poller {
            epoll,
            timer,
            signals,
            armed: None,
            events: vec![EpollEvent::empty(); 16],
        })
    }

    /// Watch `fd` for readability under `token`.
    pub fn watch(&self, fd: BorrowedFd<'_>, token: u64) -> nix::Result<()> {
        self.epoll.add(fd, EpollEvent::new(EpollFlags::EPOLLIN, token))
    }

    /// Stop reporting `fd` (watched under `token`) readable until [`Poller::watch_again`]
    /// (a socket whose datagram budget is spent: epoll is level-triggered).
    pub fn set_aside(&self, fd: BorrowedFd<'_>, token: u64) -> nix::Result<()> {
        self.epoll
            .modify(fd, &mut EpollEvent::new(EpollFlags::empty(), token))
    }

    /// Report `fd` readable again (after [`Poller::set_aside`]).
    pub fn watch_again(&self, fd: BorrowedFd<'_>, token: u64) -> nix::Result<()> {
        self.epoll
            .modify(fd, &mut EpollEvent::new(EpollFlags::EPOLLIN, token))
    }

    /// Fire the timer at `at` (`Time::NEVER`: disarm), `now` being the clock's reading.
    pub fn arm(&mut self, now: Time, at: Time) -> nix::Result<()> {
        if self.armed == Some(at) {
            return Ok(());
        }
        self.armed = Some(at);
        if at == Time::NEVER {
            return self.timer.unset();
        }
        // relative: at least 1 µs so a past deadline still fires
        let ns = at.saturating_since(now).as_ns().max(1_000);
        let ts = TimeSpec::from_duration(Duration::from_nanos(ns));
        self.timer
            .set(Expiration::OneShot(ts), TimerSetTimeFlags::empty())
    }

    /// Wait (at most `max`) and return what happened.
    pub fn wait(&mut self, max: Duration, out: &mut Vec<Wake>) -> nix::Result<()> {
        out.clear();
        let ms = max.as_millis().min(u16::MAX as u128) as u16;
        let n = match self.epoll.wait(&mut self.events, EpollTimeout::from(ms)) {
            Ok(n) => n,
            Err(nix::errno::Errno::EINTR) => return Ok(()),
            Err(e) => return Err(e),
        };
        for e in &self.events[..n] {
            match e.data() {
                TIMER => {
                    let mut buf = [0u8; 8];
                    let _ = nix::unistd::read(&self.timer, &mut buf);
                    self.armed = None;
                    out.push(Wake::Timer);
                }
                SIGNAL => {
                    while let Ok(Some(_)) = self.signals.read_signal() {}
                    out.push(Wake::Shutdown);
                }
                t => out.push(Wake::Readable(t)),
            }
        }
        Ok(())
    }
}
