//! Proximity swarms, hubs and backup hubs (spec §Design 1).
//!
//! Per request, the target data servers in one rack form a swarm. Its hub is
//! the member holding the most requested objects (ties: the lowest server
//! id, so the choice does not depend on the order targets are listed); the
//! member with the next most is the backup hub, which takes over when the
//! hub fails ([`Swarms::fail_hub`]). The front-end queries only hubs, a hub
//! forwards the queries to its members and streams their objects on. A
//! swarm's object count is its live members' requested objects: the hub's
//! own stream before any child hub joins it.
//!
//! Swarms come out in ascending rack order, members in the order the
//! targets were given. [`Swarms::build`] reuses its buffers: after the first
//! request of a size it allocates nothing. It runs in two linear passes over
//! the targets with tables indexed by rack (hence dense rack indices).

use super::{SiccError, Target, MAX_ID};

/// A target server inside its swarm.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Member {
    /// Server id.
    pub server: u32,
    /// Requested objects it holds.
    pub objects: u32,
}

impl Member {
    /// Whether `self` ranks before `other` as hub: more objects, then lower id.
    fn ranks_before(self, other: Member) -> bool {
        self.objects > other.objects || (self.objects == other.objects && self.server < other.server)
    }
}

const NO_MEMBER: Member = Member {
    server: u32::MAX,
    objects: 0,
};

/// One swarm: the target servers of a request in one rack.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Swarm {
    /// Rack index.
    pub rack: u32,
    /// Aggregation router above the rack.
    pub agg: u32,
    /// The hub's server id.
    pub hub: u32,
    /// The backup hub's server id (`None`: the swarm has one live member).
    pub backup: Option<u32>,
    /// Requested objects held by the swarm's live members.
    pub objects: u64,
    start: u32,
    live: u32,
}

/// What a hub failure changed ([`Swarms::fail_hub`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Failover {
    /// The server that failed.
    pub failed: u32,
    /// The backup that is hub now.
    pub new_hub: u32,
    /// The new backup (`None`: the new hub is the swarm's last live member).
    pub new_backup: Option<u32>,
    /// Requested objects the failed server held: the driver asks replicas.
    pub lost_objects: u32,
}

/// Per-rack accumulator of [`Swarms::build`]'s first pass.
#[derive(Clone, Copy, Debug)]
struct RackAcc {
    stamp: u32,
    agg: u32,
    count: u32,
    objects: u64,
    best: Member,
    second: Member,
    /// Swarm index after ordering; then the next free member slot.
    slot: u32,
}

const EMPTY_ACC: RackAcc = RackAcc {
    stamp: 0,
    agg: 0,
    count: 0,
    objects: 0,
    best: NO_MEMBER,
    second: NO_MEMBER,
    slot: 0,
};

/// The swarms of one request, with reusable build buffers.
#[derive(Clone, Debug, Default)]
pub struct Swarms {
    swarms: Vec<Swarm>,
    members: Vec<Member>,
    racks: Vec<RackAcc>,
    stamp: u32,
}

impl Swarms {
    /// An empty set; [`Swarms::build`] fills it.
    pub fn new() -> Swarms {
        Swarms::default()
    }

    /// Group `targets` by rack into swarms and choose each swarm's hub and
    /// backup. Errors: a target with 0 objects, an index not below
    /// [`MAX_ID`], a rack under two aggregation routers. Servers are
    /// assumed distinct (see [`Swarms::check_distinct`]).
    pub fn build(&mut self, targets: &[Target]) -> Result<(), SiccError> {
        self.swarms.clear();
        self.members.clear();
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.racks.iter_mut().for_each(|r| r.stamp = 0);
            self.stamp = 1;
        }
        let stamp = self.stamp;
        let (mut lo, mut hi) = (u32::MAX, 0u32);
        // Pass 1: per-rack counts, objects, best and second member.
        for t in targets {
            if t.objects == 0 {
                return Err(SiccError::ZeroObjects { server: t.server });
            }
            if t.rack >= MAX_ID || t.agg >= MAX_ID {
                return Err(SiccError::IdTooLarge { server: t.server });
            }
            let r = t.rack as usize;
            if r >= self.racks.len() {
                self.racks.resize(r + 1, EMPTY_ACC);
            }
            let acc = &mut self.racks[r];
            let m = Member {
                server: t.server,
                objects: t.objects,
            };
            if acc.stamp != stamp {
                *acc = RackAcc {
                    stamp,
                    agg: t.agg,
                    count: 1,
                    objects: t.objects as u64,
                    best: m,
                    second: NO_MEMBER,
                    slot: 0,
                };
                lo = lo.min(t.rack);
                hi = hi.max(t.rack);
                continue;
            }
            if acc.agg != t.agg {
                return Err(SiccError::RackInTwoAggs { rack: t.rack });
            }
            acc.count += 1;
            acc.objects += t.objects as u64;
            if m.ranks_before(acc.best) {
                acc.second = acc.best;
                acc.best = m;
            } else if m.ranks_before(acc.second) {
                acc.second = m;
            }
        }
        if targets.is_empty() {
            return Ok(());
        }
        // Swarms in rack order; member ranges laid out in that order.
        let mut start = 0u32;
        for r in lo..=hi {
            let acc = &mut self.racks[r as usize];
            if acc.stamp != stamp {
                continue;
            }
            self.swarms.push(Swarm {
                rack: r,
                agg: acc.agg,
                hub: acc.best.server,
                backup: (acc.count > 1).then_some(acc.second.server),
                objects: acc.objects,
                start,
                live: acc.count,
            });
            acc.slot = start;
            start += acc.count;
        }
        // Pass 2: place members.
        self.members.resize(targets.len(), NO_MEMBER);
        for t in targets {
            let acc = &mut self.racks[t.rack as usize];
            self.members[acc.slot as usize] = Member {
                server: t.server,
                objects: t.objects,
            };
            acc.slot += 1;
        }
        Ok(())
    }

    /// Check that no server appears twice among `targets` (sorts a copy;
    /// for drivers that cannot vouch for their input).
    pub fn check_distinct(targets: &[Target]) -> Result<(), SiccError> {
        let mut ids: Vec<u32> = targets.iter().map(|t| t.server).collect();
        ids.sort_unstable();
        match ids.windows(2).find(|w| w[0] == w[1]) {
            Some(w) => Err(SiccError::DuplicateServer { server: w[0] }),
            None => Ok(()),
        }
    }

    /// Number of swarms (= hubs).
    pub fn len(&self) -> usize {
        self.swarms.len()
    }

    /// Whether there are no swarms.
    pub fn is_empty(&self) -> bool {
        self.swarms.is_empty()
    }

    /// Swarm `i`. Panics if `i >= len()`.
    pub fn swarm(&self, i: usize) -> &Swarm {
        &self.swarms[i]
    }

    /// All swarms, in rack order.
    pub fn all(&self) -> &[Swarm] {
        &self.swarms
    }

    /// Live members of swarm `i` (hub and backup included). Panics if `i >= len()`.
    pub fn members(&self, i: usize) -> &[Member] {
        let s = &self.swarms[i];
        &self.members[s.start as usize..(s.start + s.live) as usize]
    }

    /// The hub of swarm `i` failed: its backup becomes hub, the next-ranked
    /// live member becomes backup, and the failed server leaves the swarm
    /// (its objects leave the swarm's count; the driver re-asks replicas).
    /// Errors: no such swarm, or no live member left to take over.
    pub fn fail_hub(&mut self, i: usize) -> Result<Failover, SiccError> {
        let hub = i as u32;
        let s = *self.swarms.get(i).ok_or(SiccError::NoSuchHub { hub })?;
        let Some(new_hub) = s.backup else {
            return Err(SiccError::NoBackup { hub });
        };
        let range = s.start as usize..(s.start + s.live) as usize;
        let members = &mut self.members[range];
        let pos = members
            .iter()
            .position(|m| m.server == s.hub)
            .expect("a swarm's hub is among its live members");
        let failed = members[pos];
        // Keep the live part a prefix: the failed member moves past its end.
        let last = members.len() - 1;
        members[pos..].rotate_left(1);
        debug_assert_eq!(members[last], failed);
        let live = &members[..last];
        let mut next = NO_MEMBER;
        for &m in live {
            if m.server != new_hub && m.ranks_before(next) {
                next = m;
            }
        }
        let new_backup = (next.server != u32::MAX).then_some(next.server);
        let sw = &mut self.swarms[i];
        sw.live -= 1;
        sw.hub = new_hub;
        sw.backup = new_backup;
        sw.objects -= failed.objects as u64;
        Ok(Failover {
            failed: failed.server,
            new_hub,
            new_backup,
            lost_objects: failed.objects,
        })
    }
}
