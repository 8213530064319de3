//! Parsed control messages: `Repr::parse`, `Repr::buffer_len`, `Repr::emit`.

use super::auth::WireError;
use super::packet::{Packet, Sender, HEADER_LEN};
use crate::sched::{DemandEntry, Directive, DirectiveKind};
use crate::time::Dur;

/// The controller's host id on the wire.
pub const CONTROLLER_ID: u32 = u32::MAX;
/// Bytes of an address on the wire (16-byte IPv6 or IPv4-mapped address, 2-byte port).
pub const ADDR_LEN: usize = 18;
/// Largest number of destinations in one backlog report or rate directive.
pub const MAX_ENTRIES: usize = 4096;
const NO_DEST: u32 = u32::MAX;
/// Longest slice a directive may carry (10 s: XCo slices are milliseconds).
pub const MAX_SLICE_NS: u64 = 10_000_000_000;
/// Longest start delay a directive may carry (7.5 s: the controller's lead
/// is at most 3/4 of a slice, of at most 10 s).
pub const MAX_START_IN_NS: u64 = MAX_SLICE_NS / 4 * 3;
/// Bytes of a grant's [`Echo`] (version 5).
const ECHO_LEN: usize = 24;

/// A grant's freshness (version 5: directives and ungated sets): the
/// agent's latest message the controller had accepted, when it accepted
/// it, and when it signed the grant, both on the controller's monotonic
/// clock (ns).
///
/// The agent kept the send time `a` of each recent message on its own
/// clock, so each echo is a sample of the two clocks' offset: the message
/// reached the controller after it left, so `agent clock - controller
/// clock >= a - received`. The agent keeps the largest such bound of the
/// run, less the clocks' possible drift since ([`crate::control::agent`]),
/// and a grant signed at `signed` was signed at `signed + bound` or later
/// on its own clock: its age at receipt is at most `now - signed - bound`.
/// No clock is shared or synchronised, and the bound's error is the
/// smallest one-way trip any sample saw plus the drift: a report that
/// waited behind the agent's own data in its NIC does not make later
/// grants look old. An agent refuses a grant older than its
/// `directive_max_age`: a directive delayed, or captured and replayed
/// later by anyone, grants nothing once that age has passed (found by the
/// harness, seed 21302: a hostile host replayed, 13 ms later, a crashed
/// run's directive whose original was lost, and the agent, still in that
/// run, obeyed it beside the restarted controller's grants). The
/// controller's fence includes that age.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Echo {
    /// Sequence number of the agent's message (0: none; versions 2 to 4).
    pub seq: u64,
    /// When the controller accepted that message (its clock, ns).
    pub received_ns: u64,
    /// When the controller signed the grant (its clock, ns; not before `received_ns`).
    pub signed_ns: u64,
}

/// What a control message says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Message {
    /// An agent registers (again, after a controller restart).
    Join,
    /// An agent leaves: stop scheduling its flows.
    Leave,
    /// An agent is alive.
    Heartbeat,
    /// An agent's whole backlog set B_x (cumulative state).
    Report {
        /// Destination hosts with held traffic.
        dests: Vec<u32>,
    },
    /// An agent gives back its slice to `dest`.
    GiveBack {
        /// Destination host of the slice.
        dest: u32,
        /// The epoch of the latest directive the agent had (0: not sent,
        /// as by a version-2 agent): a give-back older than the controller's
        /// latest directive to the host crossed it in flight and is ignored.
        epoch: u64,
    },
    /// The controller's directive for `directive.host`, and its freshness.
    Directive(Directive, Echo),
    /// The controller answers a join: the agent `host` adopts the header's
    /// run id if `nonce` is the one its join carried (signed).
    Hello {
        /// The host that joined.
        host: u32,
        /// The session (nonce) of that host's join.
        nonce: u64,
    },
    /// The controller does not know `host`'s session `session` (it
    /// restarted or forgot the host): join again. An agent acts on it only
    /// if `session` is its current one, so a replayed request costs nothing.
    Rejoin {
        /// The host asked to join.
        host: u32,
        /// The agent session (join nonce) the controller does not know.
        session: u64,
    },
    /// The controller answers a join with a fresh challenge: the agent
    /// `host` adopts the header's run id if `nonce` is its join's, and
    /// proves it holds its key with a [`Message::Confirm`] echoing
    /// `challenge` (signed; a host's session starts only at the confirm).
    Challenge {
        /// The host that joined.
        host: u32,
        /// The session (nonce) of that host's join.
        nonce: u64,
        /// A number the controller issued once in its run (rising).
        challenge: u64,
    },
    /// An agent answers a challenge: its join's session starts at the
    /// controller of run `run`, if `challenge` is newer than any the host
    /// confirmed before in that run (so a replayed confirm is refused).
    Confirm {
        /// The controller run that issued the challenge.
        run: u64,
        /// The challenge answered.
        challenge: u64,
        /// The agent's own control address (16-byte IPv6 or IPv4-mapped
        /// address, then the port): directives go there, never to the
        /// source of any datagram (a confirm replayed from elsewhere binds nothing new).
        addr: [u8; ADDR_LEN],
    },
    /// An agent's cumulative counts of datagrams it rejected, so the
    /// controller can show them.
    Rejections(RejectCounts),
    /// On-demand coordination: an agent's periodic report — its backlog set
    /// B_x and its demand over its last report interval, per destination
    /// (its whole state: a lost one does no harm).
    Demand {
        /// Destinations with bytes offered or held.
        entries: Vec<DemandEntry>,
        /// The controller's sequence number of the ungated set the agent
        /// applies (0: none; version 5): a controller that sent a newer one
        /// sends it again (a set lost or reordered behind a newer datagram
        /// would otherwise leave a host sending ungated to a congested link
        /// until the set next changes: found by the harness, on-demand
        /// scenario seed 27).
        ungated_seq: u64,
    },
    /// On-demand coordination: the controller's list of the destinations
    /// `host` may send to ungated (its whole set; every other destination is
    /// coordinated; signed).
    Ungate {
        /// The host it is for.
        host: u32,
        /// Destinations it sends to without a gate.
        dests: Vec<u32>,
        /// Its freshness (version 5).
        echo: Echo,
    },
}

/// Cumulative counts of rejected control datagrams, by reason.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RejectCounts {
    /// Bad signature or MAC (forged, corrupted, wrong key).
    pub auth: u64,
    /// Replayed or stale sequence number.
    pub replay: u64,
    /// Malformed (short, bad magic/version/length/type/payload, wrong direction).
    pub malformed: u64,
    /// Of a session not (or no longer) established: another controller run,
    /// an unknown agent session, an unknown sender id.
    pub session: u64,
}

impl RejectCounts {
    /// All of them.
    pub fn total(&self) -> u64 {
        self.auth + self.replay + self.malformed + self.session
    }
}

impl Message {
    /// Bytes of this message's payload on the wire.
    fn payload_len(&self) -> usize {
        match self {
            Message::Join | Message::Leave | Message::Heartbeat => 0,
            Message::Report { dests } => 2 + 4 * dests.len(),
            Message::GiveBack { .. } => 12,
            Message::Hello { .. } => 12,
            Message::Rejoin { .. } => 12,
            Message::Challenge { .. } => 20,
            Message::Confirm { .. } => 16 + ADDR_LEN,
            Message::Rejections(_) => 32,
            Message::Demand { entries, .. } => 8 + 2 + 21 * entries.len(),
            Message::Ungate { dests, .. } => 6 + ECHO_LEN + 4 * dests.len(),
            Message::Directive(d, _) => {
                21 + ECHO_LEN
                    + match &d.kind {
                        DirectiveKind::Slice { .. } => 20,
                        DirectiveKind::Rates { rates } => 2 + 12 * rates.len(),
                    }
            }
        }
    }

    /// Bytes of the whole authenticated datagram carrying this message (header, payload, tag).
    pub fn datagram_len(&self) -> usize {
        HEADER_LEN + self.payload_len() + self.sender().tag_len()
    }

    /// Who sends this message (and so how it is authenticated).
    pub fn sender(&self) -> Sender {
        Sender::of_type(self.type_byte()).expect("every message has a sender")
    }

    fn type_byte(&self) -> u8 {
        match self {
            Message::Join => 1,
            Message::Leave => 2,
            Message::Report { .. } => 3,
            Message::Directive(..) => 4,
            Message::GiveBack { .. } => 5,
            Message::Heartbeat => 6,
            Message::Hello { .. } => 7,
            Message::Rejoin { .. } => 8,
            Message::Rejections(_) => 9,
            Message::Challenge { .. } => 10,
            Message::Confirm { .. } => 11,
            Message::Demand { .. } => 14,
            Message::Ungate { .. } => 15,
        }
    }
}

/// A whole datagram: who sent it, in which session, its sequence number, what it says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Repr {
    /// Sending host (the controller: [`CONTROLLER_ID`]).
    pub host: u32,
    /// Session: the controller's random run id (controller messages), or the
    /// nonce of the agent's latest join (agent messages).
    pub run: u64,
    /// Per-session sequence number; receivers reject anything not above the last seen.
    pub seq: u64,
    /// The message.
    pub msg: Message,
}

struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], WireError> {
        let end = self.at.checked_add(n).ok_or(WireError::BadPayload(what))?;
        let s = self.b.get(self.at..end).ok_or(WireError::BadPayload(what))?;
        self.at = end;
        Ok(s)
    }
    fn u8(&mut self, what: &'static str) -> Result<u8, WireError> {
        Ok(self.take(1, what)?[0])
    }
    fn u16(&mut self, what: &'static str) -> Result<u16, WireError> {
        Ok(u16::from_be_bytes(
            self.take(2, what)?.try_into().expect("2 bytes"),
        ))
    }
    fn u32(&mut self, what: &'static str) -> Result<u32, WireError> {
        Ok(u32::from_be_bytes(
            self.take(4, what)?.try_into().expect("4 bytes"),
        ))
    }
    fn u64(&mut self, what: &'static str) -> Result<u64, WireError> {
        Ok(u64::from_be_bytes(
            self.take(8, what)?.try_into().expect("8 bytes"),
        ))
    }
    /// A grant's echo: version 5 on (before it, none: `seq` 0).
    fn echo(&mut self, version: u8, what: &'static str) -> Result<Echo, WireError> {
        if version < 5 {
            return Ok(Echo::default());
        }
        let echo = Echo {
            seq: self.u64(what)?,
            received_ns: self.u64(what)?,
            signed_ns: self.u64(what)?,
        };
        if echo.signed_ns < echo.received_ns {
            return Err(WireError::BadPayload(
                "echo signed before its message was received",
            ));
        }
        Ok(echo)
    }
    fn done(&self, what: &'static str) -> Result<(), WireError> {
        if self.at == self.b.len() {
            Ok(())
        } else {
            Err(WireError::BadPayload(what))
        }
    }
}

impl Repr {
    /// Parse a checked packet's header and payload (the tag is not checked here; see [`super::auth`]).
    pub fn parse<T: AsRef<[u8]>>(p: &Packet<T>) -> Result<Repr, WireError> {
        let mut r = Reader {
            b: p.payload(),
            at: 0,
        };
        let msg = match p.msg_type() {
            1 => Message::Join,
            2 => Message::Leave,
            6 => Message::Heartbeat,
            3 => {
                let n = r.u16("report count")? as usize;
                if n > MAX_ENTRIES {
                    return Err(WireError::BadPayload("report count over 4096"));
                }
                let dests = (0..n)
                    .map(|_| r.u32("report destination"))
                    .collect::<Result<_, _>>()?;
                Message::Report { dests }
            }
            5 => Message::GiveBack {
                dest: r.u32("give-back destination")?,
                // version 3 added the epoch; a version-2 give-back has none
                epoch: if p.version() >= 3 {
                    r.u64("give-back epoch")?
                } else {
                    0
                },
            },
            7 => Message::Hello {
                host: r.u32("hello host")?,
                nonce: r.u64("hello nonce")?,
            },
            8 => Message::Rejoin {
                host: r.u32("rejoin host")?,
                session: r.u64("rejoin session")?,
            },
            10 => Message::Challenge {
                host: r.u32("challenge host")?,
                nonce: r.u64("challenge nonce")?,
                challenge: r.u64("challenge number")?,
            },
            11 => Message::Confirm {
                run: r.u64("confirm run")?,
                challenge: r.u64("confirm challenge")?,
                addr: r.take(ADDR_LEN, "confirm address")?.try_into().expect("18 bytes"),
            },
            14 => {
                let ungated_seq = if p.version() >= 5 {
                    r.u64("demand ungated set")?
                } else {
                    0
                };
                let n = r.u16("demand count")? as usize;
                if n > MAX_ENTRIES {
                    return Err(WireError::BadPayload("demand count over 4096"));
                }
                let entries = (0..n)
                    .map(|_| {
                        Ok(DemandEntry {
                            dest: r.u32("demand destination")?,
                            offered_bytes: r.u64("demand offered bytes")?,
                            held_bytes: r.u64("demand held bytes")?,
                            backlogged: match r.u8("demand flags")? {
                                0 => false,
                                1 => true,
                                _ => return Err(WireError::BadPayload("demand flags must be 0 or 1")),
                            },
                        })
                    })
                    .collect::<Result<_, WireError>>()?;
                Message::Demand { entries, ungated_seq }
            }
            15 => {
                let host = r.u32("ungate host")?;
                let echo = r.echo(p.version(), "ungate echo")?;
                let n = r.u16("ungate count")? as usize;
                if n > MAX_ENTRIES {
                    return Err(WireError::BadPayload("ungate count over 4096"));
                }
                let dests = (0..n)
                    .map(|_| r.u32("ungate destination"))
                    .collect::<Result<_, _>>()?;
                Message::Ungate { host, dests, echo }
            }
            9 => Message::Rejections(RejectCounts {
                auth: r.u64("rejected auth")?,
                replay: r.u64("rejected replay")?,
                malformed: r.u64("rejected malformed")?,
                session: r.u64("rejected session")?,
            }),
            4 => {
                let host = r.u32("directive host")?;
                let epoch = r.u64("directive epoch")?;
                // version 3 added the start; a version-2 directive applies on receipt
                let start_in_ns = if p.version() >= 3 {
                    r.u64("directive start")?
                } else {
                    0
                };
                if start_in_ns > MAX_START_IN_NS {
                    return Err(WireError::BadPayload("directive start must be 0 to 7.5 s away"));
                }
                let echo = r.echo(p.version(), "directive echo")?;
                let kind = match r.u8("directive kind")? {
                    1 => {
                        let dest = r.u32("slice destination")?;
                        let len_ns = r.u64("slice length")?;
                        let rate = r.u64("slice rate")?;
                        if len_ns == 0 || len_ns > MAX_SLICE_NS {
                            return Err(WireError::BadPayload("slice length must be 1 ns to 10 s"));
                        }
                        DirectiveKind::Slice {
                            dest: (dest != NO_DEST).then_some(dest),
                            len: Dur::from_ns(len_ns),
                            rate_bps: (rate != 0).then_some(rate),
                        }
                    }
                    2 => {
                        let n = r.u16("rate count")? as usize;
                        if n > MAX_ENTRIES {
                            return Err(WireError::BadPayload("rate count over 4096"));
                        }
                        let rates = (0..n)
                            .map(|_| Ok((r.u32("rate destination")?, r.u64("rate")?)))
                            .collect::<Result<_, WireError>>()?;
                        DirectiveKind::Rates { rates }
                    }
                    _ => return Err(WireError::BadPayload("unknown directive kind")),
                };
                Message::Directive(
                    Directive {
                        host,
                        epoch,
                        start_in: Dur::from_ns(start_in_ns),
                        kind,
                    },
                    echo,
                )
            }
            t => return Err(WireError::UnknownType(t)),
        };
        r.done("trailing payload bytes")?;
        let from_controller = p.host() == CONTROLLER_ID;
        if from_controller != (msg.sender() == Sender::Controller) {
            return Err(WireError::BadPayload("sender id does not fit the message type"));
        }
        Ok(Repr {
            host: p.host(),
            run: p.run(),
            seq: p.seq(),
            msg,
        })
    }

    fn payload_len(&self) -> usize {
        self.msg.payload_len()
    }

    /// Bytes of the whole datagram, tag included.
    pub fn buffer_len(&self) -> usize {
        self.msg.datagram_len()
    }

    /// Write header and payload into `p` (sized with `buffer_len`); the tag is written by the sender's key.
    ///
    /// Panics if a list has more than `MAX_ENTRIES` entries or `p` is too short.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut Packet<T>) {
        let len = self.payload_len();
        p.set_header(self.msg.type_byte(), self.host, self.run, self.seq, len as u16);
        let b = p.payload_mut();
        let mut at = 0;
        let mut put = |bytes: &[u8]| {
            b[at..at + bytes.len()].copy_from_slice(bytes);
            at += bytes.len();
        };
        match &self.msg {
            Message::Join | Message::Leave | Message::Heartbeat => {}
            Message::Report { dests } => {
                assert!(dests.len() <= MAX_ENTRIES, "too many destinations in one report");
                put(&(dests.len() as u16).to_be_bytes());
                for d in dests {
                    put(&d.to_be_bytes());
                }
            }
            Message::GiveBack { dest, epoch } => {
                put(&dest.to_be_bytes());
                put(&epoch.to_be_bytes());
            }
            Message::Hello { host, nonce } => {
                put(&host.to_be_bytes());
                put(&nonce.to_be_bytes());
            }
            Message::Rejoin { host, session } => {
                put(&host.to_be_bytes());
                put(&session.to_be_bytes());
            }
            Message::Challenge {
                host,
                nonce,
                challenge,
            } => {
                put(&host.to_be_bytes());
                put(&nonce.to_be_bytes());
                put(&challenge.to_be_bytes());
            }
            Message::Confirm { run, challenge, addr } => {
                put(&run.to_be_bytes());
                put(&challenge.to_be_bytes());
                put(addr);
            }
            Message::Rejections(c) => {
                for v in [c.auth, c.replay, c.malformed, c.session] {
                    put(&v.to_be_bytes());
                }
            }
            Message::Demand { entries, ungated_seq } => {
                put(&ungated_seq.to_be_bytes());
                assert!(
                    entries.len() <= MAX_ENTRIES,
                    "too many destinations in one demand report"
                );
                put(&(entries.len() as u16).to_be_bytes());
                for e in entries {
                    put(&e.dest.to_be_bytes());
                    put(&e.offered_bytes.to_be_bytes());
                    put(&e.held_bytes.to_be_bytes());
                    put(&[u8::from(e.backlogged)]);
                }
            }
            Message::Ungate { host, dests, echo } => {
                assert!(dests.len() <= MAX_ENTRIES, "too many destinations in one ungate");
                put(&host.to_be_bytes());
                put(&echo.seq.to_be_bytes());
                put(&echo.received_ns.to_be_bytes());
                put(&echo.signed_ns.max(echo.received_ns).to_be_bytes());
                put(&(dests.len() as u16).to_be_bytes());
                for d in dests {
                    put(&d.to_be_bytes());
                }
            }
            Message::Directive(d, echo) => {
                put(&d.host.to_be_bytes());
                put(&d.epoch.to_be_bytes());
                put(&d.start_in.as_ns().min(MAX_START_IN_NS).to_be_bytes());
                put(&echo.seq.to_be_bytes());
                put(&echo.received_ns.to_be_bytes());
                put(&echo.signed_ns.max(echo.received_ns).to_be_bytes());
                match &d.kind {
                    DirectiveKind::Slice { dest, len, rate_bps } => {
                        put(&[1]);
                        put(&dest.unwrap_or(NO_DEST).to_be_bytes());
                        put(&len.as_ns().max(1).to_be_bytes());
                        put(&rate_bps.unwrap_or(0).to_be_bytes());
                    }
                    DirectiveKind::Rates { rates } => {
                        assert!(rates.len() <= MAX_ENTRIES, "too many rates in one directive");
                        put(&[2]);
                        put(&(rates.len() as u16).to_be_bytes());
                        for (d, r) in rates {
                            put(&d.to_be_bytes());
                            put(&r.to_be_bytes());
                        }
                    }
                }
            }
        }
    }
}
