//! SICC against its spec (`shared/spec/sicc.md`): Algorithm 1's rules on
//! random catalogues, a hand-worked tree, the backup hub, speed control's
//! equations on hand-computed inputs, compression, redirection, and the SW
//! and ICTCP baselines on unit scenarios.

use std::collections::{BTreeMap, BTreeSet};
use xco_core::sicc::compress::{pack, pack_uncompressed_count, Packing};
use xco_core::sicc::ictcp::{Adjust, IctcpConfig, IctcpReceiver};
use xco_core::sicc::speed::{
    allocate_hub_rates, update_planned, PlanStep, QueueReport, SpeedConfig, SpeedControl,
};
use xco_core::sicc::{
    hubs_per_request, max_hubs_at_once, AggTree, Forwarder, Object, Parent, PendingQuery, Proximity,
    Redirector, ReplicaMap, SiccError, SlidingWindow, SwConfig, Swarms, Target, TreeConfig, UplinkReading,
};
use xco_core::Rng;

/// Counts heap allocations made by the current thread (tests run in parallel).
struct CountingAlloc;

thread_local! {
    static ALLOCS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

unsafe impl std::alloc::GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        ALLOCS.with(|c| c.set(c.get() + 1));
        unsafe { std::alloc::System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        unsafe { std::alloc::System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        ALLOCS.with(|c| c.set(c.get() + 1));
        unsafe { std::alloc::System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: CountingAlloc = CountingAlloc;

fn allocations() -> u64 {
    ALLOCS.with(|c| c.get())
}

const G: u64 = 1_000_000_000;
const M: u64 = 1_000_000;

// ---------------------------------------------------------------- helpers

/// A data center: racks of servers, racks grouped under aggregation routers.
#[derive(Clone, Copy, Debug)]
struct Dc {
    per_rack: u32,
    racks: u32,
    racks_per_agg: u32,
}

impl Dc {
    fn servers(&self) -> u32 {
        self.per_rack * self.racks
    }
    fn target(&self, server: u32, objects: u32) -> Target {
        let rack = server / self.per_rack;
        Target {
            server,
            rack,
            agg: rack / self.racks_per_agg,
            objects,
        }
    }
}

/// `count` distinct random servers of `dc`, each holding 1..=max_objects
/// requested objects (a skewed draw when `skew`: most hold 1).
fn random_targets(rng: &mut Rng, dc: Dc, count: u32, max_objects: u32, skew: bool) -> Vec<Target> {
    let mut ids: Vec<u32> = (0..dc.servers()).collect();
    let count = count.min(dc.servers());
    for i in 0..count as usize {
        let j = i + rng.below((ids.len() - i) as u64) as usize;
        ids.swap(i, j);
    }
    ids[..count as usize]
        .iter()
        .map(|&s| {
            let o = if skew && rng.below(4) != 0 {
                1
            } else {
                rng.range_inclusive(1, max_objects as u64) as u32
            };
            dc.target(s, o)
        })
        .collect()
}

fn random_dc(rng: &mut Rng) -> Dc {
    Dc {
        per_rack: rng.range_inclusive(1, 60) as u32,
        racks: rng.range_inclusive(1, 120) as u32,
        racks_per_agg: rng.range_inclusive(1, 30) as u32,
    }
}

/// Every property of a built tree the spec and the module docs name.
fn check_tree(tree: &AggTree, targets: &[Target], n: u32, rule1: bool) {
    let h = tree.hubs() as u32;
    let by_server: BTreeMap<u32, Target> = targets.iter().map(|t| (t.server, *t)).collect();
    // Swarms: one per rack that holds targets; hub ranks first, backup second.
    let racks: BTreeSet<u32> = targets.iter().map(|t| t.rack).collect();
    assert_eq!(h as usize, racks.len(), "one swarm per rack with targets");
    let mut covered = BTreeSet::new();
    for x in 0..h {
        let s = tree.swarm(x);
        let mut ms: Vec<_> = tree.members(x).to_vec();
        assert!(!ms.is_empty());
        for m in &ms {
            let t = by_server[&m.server];
            assert_eq!((t.rack, t.agg, t.objects), (s.rack, s.agg, m.objects));
            assert!(covered.insert(m.server), "server {} in two swarms", m.server);
        }
        ms.sort_by(|a, b| b.objects.cmp(&a.objects).then(a.server.cmp(&b.server)));
        assert_eq!(s.hub, ms[0].server, "hub = most requested objects");
        assert_eq!(s.backup, ms.get(1).map(|m| m.server), "backup = next most");
        assert_eq!(s.objects, ms.iter().map(|m| m.objects as u64).sum::<u64>());
    }
    assert_eq!(covered.len(), targets.len(), "every target server in a swarm");
    // Every hub reached exactly once from the front-end (the root).
    let mut seen = vec![0u32; h as usize];
    let mut stack: Vec<(u32, u32)> = tree.root_children().iter().map(|&r| (r, 1)).collect();
    while let Some((x, d)) = stack.pop() {
        seen[x as usize] += 1;
        assert!(seen[x as usize] == 1, "hub {x} reached twice");
        assert_eq!(tree.depth(x), d);
        for &c in tree.children(x) {
            assert_eq!(tree.parent(c), Parent::Hub(x));
            stack.push((c, d + 1));
        }
    }
    assert!(seen.iter().all(|&k| k == 1), "every hub in the tree exactly once");
    for &r in tree.root_children() {
        assert_eq!(tree.parent(r), Parent::FrontEnd);
    }
    // Rule 2 on recomputed subtree sums; Rule 1; at most N children per hub.
    fn sum(tree: &AggTree, x: u32) -> u64 {
        tree.swarm(x).objects + tree.children(x).iter().map(|&c| sum(tree, c)).sum::<u64>()
    }
    for x in 0..h {
        assert_eq!(tree.subtree_objects(x), sum(tree, x), "hub {x}'s subtree count");
        let forced = tree.links().iter().any(|l| l.parent == x && l.parent_full);
        assert!(
            tree.children(x).len() as u32 <= n || forced,
            "hub {x} has more than N children without need"
        );
        if let Parent::Hub(p) = tree.parent(x) {
            assert!(
                tree.subtree_objects(x) < tree.subtree_objects(p),
                "Rule 2: {x} under {p}"
            );
            if rule1 {
                assert_eq!(tree.swarm(x).agg, tree.swarm(p).agg, "Rule 1: {x} under {p}");
            }
        }
    }
    // Replay the link log: a parent takes a child beyond N only when flagged full.
    let mut kids = vec![0u32; h as usize];
    let mut last_hi = u32::MAX;
    for l in tree.links() {
        if l.moved {
            kids[last_hi as usize] -= 1;
        } else {
            last_hi = l.child;
        }
        let before = kids[l.parent as usize];
        assert_eq!(
            before >= n,
            l.parent_full,
            "{l:?}: parent had {before} children, N = {n}"
        );
        kids[l.parent as usize] += 1;
    }
    for x in 0..h {
        assert_eq!(kids[x as usize] as usize, tree.children(x).len());
    }
    for l in tree.links() {
        assert!(l.child_objects <= l.parent_objects, "Rule 2 at link time: {l:?}");
        if rule1 {
            assert_eq!(tree.swarm(l.child).agg, tree.swarm(l.parent).agg, "Rule 1: {l:?}");
        }
    }
    // The front-end takes more than N only when Rule 1 leaves no partner:
    // one hub per router.
    let root = tree.root_children();
    if root.len() as u32 > n {
        assert!(rule1, "without proximity every hub finds a partner");
        let routers: BTreeSet<u32> = root.iter().map(|&r| tree.swarm(r).agg).collect();
        assert_eq!(routers.len(), root.len(), "two root hubs of one router (N = {n})");
    }
    let total: u64 = targets.iter().map(|t| t.objects as u64).sum();
    assert_eq!(root.iter().map(|&r| tree.subtree_objects(r)).sum::<u64>(), total);
}

fn parents(tree: &AggTree) -> Vec<Parent> {
    (0..tree.hubs() as u32).map(|x| tree.parent(x)).collect()
}

// ------------------------------------------------------- swarms and tree

#[test]
fn algorithm1_rules_hold_on_random_catalogues() {
    let mut tree = AggTree::new();
    let (mut deep, mut full, mut crowded) = (0, 0, 0);
    for seed in 0..300u64 {
        let mut rng = Rng::stream(seed, 1);
        let dc = random_dc(&mut rng);
        let count = rng.range_inclusive(1, dc.servers() as u64) as u32;
        let targets = random_targets(&mut rng, dc, count, 10, seed % 3 == 0);
        let n = rng.range_inclusive(1, 12) as u32;
        tree.build(&targets, &TreeConfig::new(n), &mut rng).unwrap();
        check_tree(&tree, &targets, n, true);
        deep += u32::from(tree.max_depth() >= 3);
        full += tree.links().iter().filter(|l| l.parent_full).count();
        crowded += u32::from(tree.root_children().len() as u32 > n);
    }
    assert!(
        deep > 20,
        "the random catalogues must exercise multi-level trees ({deep})"
    );
    assert!(
        full > 0 && crowded > 0,
        "and full routers ({full}) and crowded front-ends ({crowded})"
    );
}

#[test]
fn a_warm_builder_does_not_allocate() {
    let dc = Dc {
        per_rack: 60,
        racks: 200,
        racks_per_agg: 20,
    };
    let mut rng = Rng::new(41);
    let sets: Vec<_> = (0..4)
        .map(|_| random_targets(&mut rng, dc, 5000, 10, false))
        .collect();
    for proximity in [Proximity::Aggregation, Proximity::Random] {
        let cfg = TreeConfig {
            max_children: 5,
            proximity,
        };
        let mut tree = AggTree::new();
        for s in &sets {
            tree.build(s, &cfg, &mut rng).unwrap();
        }
        let before = allocations();
        for s in sets.iter().rev() {
            tree.build(s, &cfg, &mut rng).unwrap();
        }
        assert_eq!(allocations() - before, 0, "{proximity:?}: rebuilding allocated");
        assert!(tree.max_depth() >= 2);
    }
}

#[test]
fn sicc_nps_links_across_routers_and_keeps_rule_2() {
    let mut tree = AggTree::new();
    let mut crossed = 0;
    for seed in 0..100u64 {
        let mut rng = Rng::stream(seed, 2);
        let dc = random_dc(&mut rng);
        let count = rng.range_inclusive(1, dc.servers() as u64) as u32;
        let targets = random_targets(&mut rng, dc, count, 10, false);
        let n = rng.range_inclusive(1, 8) as u32;
        let cfg = TreeConfig {
            max_children: n,
            proximity: Proximity::Random,
        };
        tree.build(&targets, &cfg, &mut rng).unwrap();
        check_tree(&tree, &targets, n, false);
        crossed += tree
            .links()
            .iter()
            .filter(|l| tree.swarm(l.child).agg != tree.swarm(l.parent).agg)
            .count();
    }
    assert!(crossed > 0, "without proximity some links cross routers");
}

#[test]
fn same_seed_same_tree_and_input_order_does_not_matter() {
    for seed in 0..20u64 {
        let mut rng = Rng::stream(seed, 3);
        let dc = Dc {
            per_rack: 20,
            racks: 60,
            racks_per_agg: 6,
        };
        let targets = random_targets(&mut rng, dc, 700, 10, false);
        for proximity in [Proximity::Aggregation, Proximity::Random] {
            let cfg = TreeConfig {
                max_children: 4,
                proximity,
            };
            let (mut a, mut b) = (AggTree::new(), AggTree::new());
            a.build(&targets, &cfg, &mut Rng::new(seed)).unwrap();
            b.build(&targets, &cfg, &mut Rng::new(seed)).unwrap();
            assert_eq!(parents(&a), parents(&b));
            assert_eq!(a.links(), b.links());
            let hubs = |t: &AggTree| (0..t.hubs() as u32).map(|x| *t.swarm(x)).collect::<Vec<_>>();
            assert_eq!(hubs(&a), hubs(&b));
            if proximity == Proximity::Aggregation {
                // Rule 1 alone draws nothing: the order of the targets does not matter.
                let mut rev = targets.clone();
                rev.reverse();
                b.build(&rev, &cfg, &mut Rng::new(seed + 1)).unwrap();
                assert_eq!(parents(&a), parents(&b));
                assert_eq!(a.links(), b.links());
            }
        }
    }
}

/// Algorithm 1 by hand: five hubs under one router with 1, 2, 3, 4 and 10
/// objects, N = 2.
/// - A(1) leaves Q_h first and joins B(2), the fewest-objects other hub: B = 3.
/// - B(3) (tie with C, lower index) joins C(3); C has room, so B's child A
///   moves up to C: C = 6 with children B and A, B = 2.
/// - D(4) leaves; C is full (N children), so D joins E(10): E = 14.
/// - Two hubs (C, E) talk to the front-end: done.
#[test]
fn algorithm1_worked_example() {
    let dc = Dc {
        per_rack: 1,
        racks: 5,
        racks_per_agg: 5,
    };
    let targets: Vec<_> = [1, 2, 3, 4, 10]
        .iter()
        .enumerate()
        .map(|(s, &o)| dc.target(s as u32, o))
        .collect();
    let mut tree = AggTree::new();
    tree.build(&targets, &TreeConfig::new(2), &mut Rng::new(0))
        .unwrap();
    let (a, b, c, d, e) = (0, 1, 2, 3, 4);
    assert_eq!(tree.root_children(), &[c, e]);
    assert_eq!(tree.children(c), &[b, a]);
    assert_eq!(tree.children(e), &[d]);
    assert!(tree.children(b).is_empty());
    assert_eq!([a, b, c, d, e].map(|x| tree.subtree_objects(x)), [1, 2, 6, 4, 14]);
    assert_eq!([a, b, c, d, e].map(|x| tree.depth(x)), [2, 2, 1, 2, 1]);
    let l: Vec<_> = tree
        .links()
        .iter()
        .map(|l| (l.child, l.parent, l.moved))
        .collect();
    assert_eq!(l, [(a, b, false), (b, c, false), (a, c, true), (d, e, false)]);
    check_tree(&tree, &targets, 2, true);
}

/// Four hubs of one object under one router, N = 1:
/// - A joins B (fewest objects, then lowest index): B = 2, full.
/// - C joins D: D = 2, full.
/// - B leaves Q_h; every other hub of the router is full, so it joins the
///   fewest-objects full one, D, which takes a second child: the front-end
///   keeps its N = 1 at the price of one hub over N.
#[test]
fn algorithm1_joins_a_full_hub_only_when_every_hub_is_full() {
    let dc = Dc {
        per_rack: 1,
        racks: 4,
        racks_per_agg: 4,
    };
    let targets: Vec<_> = (0..4).map(|s| dc.target(s, 1)).collect();
    let mut tree = AggTree::new();
    tree.build(&targets, &TreeConfig::new(1), &mut Rng::new(0))
        .unwrap();
    let (a, b, c, d) = (0, 1, 2, 3);
    assert_eq!(tree.root_children(), &[d]);
    assert_eq!(tree.children(d), &[c, b]);
    assert_eq!(tree.children(b), &[a]);
    assert_eq!([a, b, c, d].map(|x| tree.depth(x)), [3, 2, 2, 1]);
    let l: Vec<_> = tree
        .links()
        .iter()
        .map(|l| (l.child, l.parent, l.parent_full))
        .collect();
    assert_eq!(l, [(a, b, false), (c, d, false), (b, d, true)]);
    check_tree(&tree, &targets, 1, true);
}

#[test]
fn few_hubs_or_nmt_means_no_tree() {
    let mut rng = Rng::new(5);
    let dc = Dc {
        per_rack: 10,
        racks: 30,
        racks_per_agg: 3,
    };
    let targets = random_targets(&mut rng, dc, 200, 10, false);
    let mut tree = AggTree::new();
    tree.build(&targets, &TreeConfig::flat(), &mut rng).unwrap();
    assert_eq!(tree.root_children().len(), tree.hubs());
    assert_eq!(tree.max_depth(), 1);
    tree.build(&targets, &TreeConfig::new(tree.hubs() as u32), &mut rng)
        .unwrap();
    assert_eq!(tree.max_depth(), 1);
    tree.build(&targets, &TreeConfig::new(tree.hubs() as u32 - 1), &mut rng)
        .unwrap();
    assert_eq!(tree.max_depth(), 2);
    tree.build(&[], &TreeConfig::new(3), &mut rng).unwrap();
    assert_eq!((tree.hubs(), tree.root_children().len()), (0, 0));
}

#[test]
fn every_router_alone_leaves_the_front_end_over_n() {
    // One rack per router: Rule 1 links nothing.
    let dc = Dc {
        per_rack: 4,
        racks: 10,
        racks_per_agg: 1,
    };
    let targets: Vec<_> = (0..40).map(|s| dc.target(s, 1 + s % 3)).collect();
    let mut tree = AggTree::new();
    tree.build(&targets, &TreeConfig::new(3), &mut Rng::new(1))
        .unwrap();
    assert_eq!(tree.root_children().len(), 10);
    assert!(tree.links().is_empty());
    check_tree(&tree, &targets, 3, true);
}

#[test]
fn bad_targets_are_named() {
    let dc = Dc {
        per_rack: 4,
        racks: 4,
        racks_per_agg: 2,
    };
    let mut sw = Swarms::new();
    let mut t = vec![dc.target(0, 1), dc.target(5, 0)];
    assert_eq!(sw.build(&t), Err(SiccError::ZeroObjects { server: 5 }));
    t[1].objects = 2;
    t.push(Target {
        agg: 7,
        ..dc.target(1, 1)
    });
    assert_eq!(sw.build(&t), Err(SiccError::RackInTwoAggs { rack: 0 }));
    t.pop();
    t.push(dc.target(5, 1));
    assert_eq!(
        Swarms::check_distinct(&t),
        Err(SiccError::DuplicateServer { server: 5 })
    );
    let big = Target {
        rack: 1 << 24,
        ..dc.target(9, 1)
    };
    assert_eq!(sw.build(&[big]), Err(SiccError::IdTooLarge { server: 9 }));
    assert!(sw.build(&t[..2]).is_ok());
    assert_eq!(
        SiccError::ZeroObjects { server: 5 }.to_string(),
        "target server 5 holds no requested object"
    );
}

#[test]
fn backup_hub_takes_over_and_the_request_completes() {
    let dc = Dc {
        per_rack: 6,
        racks: 8,
        racks_per_agg: 4,
    };
    let mut rng = Rng::new(11);
    let targets = random_targets(&mut rng, dc, 40, 9, false);
    let mut tree = AggTree::new();
    tree.build(&targets, &TreeConfig::new(2), &mut rng).unwrap();
    let total: u64 = targets.iter().map(|t| t.objects as u64).sum();
    // A hub below the front-end whose swarm has a backup.
    let x = (0..tree.hubs() as u32)
        .filter(|&x| tree.swarm(x).backup.is_some())
        .max_by_key(|&x| tree.depth(x))
        .unwrap();
    let before = *tree.swarm(x);
    let shape = parents(&tree);
    let ancestors: Vec<(u32, u64)> = std::iter::successors(Some(x), |&y| match tree.parent(y) {
        Parent::Hub(p) => Some(p),
        Parent::FrontEnd => None,
    })
    .map(|y| (y, tree.subtree_objects(y)))
    .collect();
    let f = tree.fail_hub(x).unwrap();
    assert_eq!(f.failed, before.hub);
    assert_eq!(f.new_hub, before.backup.unwrap());
    assert_eq!(tree.swarm(x).hub, f.new_hub);
    assert_eq!(tree.swarm(x).backup, f.new_backup);
    assert!(tree.members(x).iter().all(|m| m.server != f.failed));
    assert_eq!(
        shape,
        parents(&tree),
        "the backup takes the hub's place in the tree"
    );
    for (y, objects) in ancestors {
        assert_eq!(tree.subtree_objects(y), objects - f.lost_objects as u64);
    }
    // Rule 2 still holds, and the request completes: the tree delivers the
    // rest, the lost objects come from replicas.
    for y in 0..tree.hubs() as u32 {
        if let Parent::Hub(p) = tree.parent(y) {
            assert!(tree.subtree_objects(y) < tree.subtree_objects(p));
        }
    }
    let via_tree = deliver_through_tree(&tree);
    assert_eq!(via_tree + f.lost_objects as u64, total);
    // Fail until the swarm is empty: then there is no backup.
    loop {
        match tree.fail_hub(x) {
            Ok(_) => continue,
            Err(e) => {
                assert_eq!(e, SiccError::NoBackup { hub: x });
                break;
            }
        }
    }
    assert_eq!(tree.members(x).len(), 1);
}

/// Run one request over `tree` with a forwarder per hub: members deliver
/// their objects to their hub, hubs stream up as objects arrive; returns
/// what the front-end received.
fn deliver_through_tree(tree: &AggTree) -> u64 {
    let h = tree.hubs();
    let mut fw: Vec<Forwarder> = (0..h).map(|_| Forwarder::new()).collect();
    let mut id = 0u32;
    for x in 0..h as u32 {
        let hub = tree.swarm(x).hub;
        let mut own = Vec::new();
        for m in tree.members(x) {
            for _ in 0..m.objects {
                let o = Object { id, bytes: 100 };
                id += 1;
                if m.server == hub {
                    own.push(o);
                }
            }
        }
        fw[x as usize].start(&own, tree.subtree_objects(x));
        for m in tree.members(x).iter().filter(|m| m.server != hub) {
            for k in 0..m.objects {
                fw[x as usize].on_arrival(Object { id: k, bytes: 100 });
            }
        }
    }
    let mut received = 0;
    loop {
        let mut progress = false;
        for x in 0..h as u32 {
            while let Some(o) = fw[x as usize].next_object() {
                progress = true;
                match tree.parent(x) {
                    Parent::FrontEnd => received += 1,
                    Parent::Hub(p) => fw[p as usize].on_arrival(o),
                }
            }
        }
        if !progress {
            break;
        }
    }
    assert!(fw.iter().all(|f| f.is_done() && f.remaining() == 0));
    received
}

// ------------------------------------------------------------ hub count

#[test]
fn hub_count_formula() {
    // 100 KB edge buffer, 1,500-B packets, equal 1 Gbps links: M = S_e / s.
    let m = max_hubs_at_once(100_000, 1500, G, G, UplinkReading::OverDownlink);
    assert_eq!(m, 66);
    assert_eq!(hubs_per_request(m, 1), 66);
    assert_eq!(hubs_per_request(m, 4), 16);
    assert_eq!(hubs_per_request(m, 100), 1, "at least one hub");
    assert_eq!(hubs_per_request(m, 0), 66);
    // The two readings of B_u as a pure number.
    assert_eq!(
        max_hubs_at_once(100_000, 1500, G, 100 * M, UplinkReading::OverDownlink),
        666
    );
    assert_eq!(
        max_hubs_at_once(100_000, 1500, G, 100 * M, UplinkReading::DownlinkOverUplink),
        6
    );
    assert_eq!(max_hubs_at_once(100, 1500, G, G, UplinkReading::OverDownlink), 1);
    assert_eq!(max_hubs_at_once(100_000, 0, G, G, UplinkReading::OverDownlink), 1);
}

// ---------------------------------------------------------- forwarding

#[test]
fn forwarding_sends_own_objects_first_then_arrivals_in_order() {
    let o = |id| Object { id, bytes: 10 };
    let mut f = Forwarder::new();
    f.start(&[o(1), o(2)], 6);
    f.on_arrival(o(10));
    f.on_arrival(o(11));
    assert_eq!(f.next_object(), Some(o(1)));
    f.push_own(o(3)); // read from disk late: still ahead of arrivals
    f.on_arrival(o(12));
    let rest: Vec<_> = std::iter::from_fn(|| f.next_object()).map(|x| x.id).collect();
    assert_eq!(rest, [2, 3, 10, 11, 12]);
    assert_eq!((f.sent(), f.remaining(), f.is_done()), (6, 0, true));
    // Continuous: an arrival after the queue ran dry is sent at once.
    f.start(&[], 2);
    assert_eq!(f.next_object(), None);
    f.on_arrival(o(7));
    assert_eq!(f.next_object(), Some(o(7)));
    assert_eq!(f.remaining(), 1);
    f.expect_fewer(1);
    assert!(f.is_done());
}

// ---------------------------------------------------------- compression

#[test]
fn compression_worked_example() {
    let sizes = [1000, 400, 100, 1460, 1, 3000];
    let mut out = Vec::new();
    let n = pack(&sizes, Packing::default(), &mut out);
    let spans: Vec<_> = out.iter().map(|p| (p.first, p.end, p.payload_bytes)).collect();
    assert_eq!(
        spans,
        [
            (0, 2, 1400),
            (2, 3, 100),
            (3, 4, 1460),
            (4, 5, 1),
            (5, 5, 1460),
            (5, 5, 1460),
            (5, 6, 80)
        ]
    );
    assert_eq!(n, 7);
    assert_eq!(pack_uncompressed_count(&sizes, Packing::default()), 8);
}

#[test]
fn compression_never_exceeds_the_mss_and_keeps_every_object() {
    let mut rng = Rng::new(17);
    let mut out = Vec::new();
    let mut batch = Vec::new();
    for round in 0..500 {
        let packing = Packing {
            payload_bytes: rng.range_inclusive(100, 9000) as u32,
            per_object_bytes: rng.below(9) as u32,
        };
        let hi = if round % 5 == 0 { 12_000 } else { 1000 };
        let sizes: Vec<u32> = (0..rng.below(300))
            .map(|_| rng.range_inclusive(20, hi) as u32)
            .collect();
        let n = pack(&sizes, packing, &mut out);
        assert_eq!(n, out.len());
        let mut next = 0u32;
        for p in &out {
            assert!(p.payload_bytes <= packing.payload_bytes, "{p:?} over {packing:?}");
            assert_eq!(p.first, next, "objects in order, each once");
            next = p.end;
            let framed = |i: u32| sizes[i as usize] + packing.per_object_bytes;
            if p.objects() > 0 && (p.first..p.end).map(framed).sum::<u32>() > packing.payload_bytes {
                // Only a lone oversize object's last piece may stand for more than it carries.
                assert_eq!(p.objects(), 1);
                assert!(framed(p.first) > packing.payload_bytes);
            }
        }
        assert_eq!(next as usize, sizes.len(), "every object kept");
        let total: u64 = sizes.iter().map(|&b| (b + packing.per_object_bytes) as u64).sum();
        assert_eq!(out.iter().map(|p| p.payload_bytes as u64).sum::<u64>(), total);
        // Ratio = packets without over packets with; never below 1.
        let without = pack_uncompressed_count(&sizes, packing);
        assert!(without >= n as u64);
        // A hub's batches follow the same rule in the same order.
        let mut f = Forwarder::new();
        let objs: Vec<_> = sizes
            .iter()
            .enumerate()
            .map(|(i, &b)| Object {
                id: i as u32,
                bytes: b,
            })
            .collect();
        f.start(&objs, objs.len() as u64);
        let mut k = 0;
        loop {
            let used = f.next_batch(packing.payload_bytes, packing.per_object_bytes, &mut batch);
            if batch.is_empty() {
                break;
            }
            assert!(used <= packing.payload_bytes || batch.len() == 1);
            for o in &batch {
                assert_eq!(o.id, k);
                k += 1;
            }
        }
        assert_eq!(k as usize, sizes.len());
    }
}

// -------------------------------------------------------- speed control

#[test]
fn allocation_follows_eqs_2_to_4() {
    // B_p = 100 among four hubs: eq 2 gives 25 each. Measured 10, 25, 40, 50:
    // hub 0 is under (eq 4: keeps 10, frees 15), hub 1 exact, hubs 2 and 3
    // over (eq 3: 15 / 2 each, the odd unit to the first).
    let mut a = [0u64; 4];
    let s = allocate_hub_rates(100, &[10, 25, 40, 50], &mut a);
    assert_eq!(a, [10, 25, 33, 32]);
    assert_eq!((s.over, s.under, s.surplus_bps), (2, 1, 15));
    // No over-utilised hub: eq 2's shares stand (remainder to the first).
    let s = allocate_hub_rates(103, &[1, 2, 3, 4], &mut a);
    assert_eq!(a, [26, 26, 26, 25]);
    assert_eq!(s.over, 0);
    // Property: the sum is always B_p.
    let mut rng = Rng::new(3);
    for _ in 0..2000 {
        let n = rng.range_inclusive(1, 40) as usize;
        let bp = rng.below(10 * G);
        let measured: Vec<u64> = (0..n).map(|_| rng.below(2 * bp / n as u64 + 2)).collect();
        let mut alloc = vec![0; n];
        let s = allocate_hub_rates(bp, &measured, &mut alloc);
        assert_eq!(alloc.iter().sum::<u64>(), bp);
        for (&r, &x) in measured.iter().zip(&alloc) {
            if s.over > 0 && r < bp / n as u64 {
                assert_eq!(x, r, "eq 4: an under-utilised hub gets what it used");
            }
        }
    }
}

#[test]
fn planned_downlink_follows_eqs_5_and_6() {
    let cfg = SpeedConfig::default();
    // q / S_a = 0.5 >= T: B_p · (1 − 0.2 · 0.5) = 800 → 720 Mbps.
    assert_eq!(
        update_planned(&cfg, 800 * M, G, 600 * M, Some(50_000), 100_000),
        (720 * M, PlanStep::Decreased)
    );
    // q / S_a = 0.05 < T: B_p + α · B_a = 800 + 0.2 · 600 = 920 Mbps.
    assert_eq!(
        update_planned(&cfg, 800 * M, G, 600 * M, Some(5_000), 100_000),
        (920 * M, PlanStep::Increased)
    );
    // Capped at B_d.
    assert_eq!(
        update_planned(&cfg, 950 * M, G, 600 * M, Some(0), 100_000),
        (G, PlanStep::Increased)
    );
    // Exactly T decreases; a queue over the buffer counts as full.
    assert_eq!(
        update_planned(&cfg, 1000 * M, G, 0, Some(10_000), 100_000),
        (980 * M, PlanStep::Decreased)
    );
    assert_eq!(
        update_planned(&cfg, 1000 * M, G, 0, Some(900_000), 100_000),
        (800 * M, PlanStep::Decreased)
    );
    // No report: hold.
    assert_eq!(
        update_planned(&cfg, 500 * M, G, 0, None, 100_000),
        (500 * M, PlanStep::Held)
    );
}

#[test]
fn speed_control_uses_late_reports_once_and_splits_b_p() {
    let ms = 1_000_000u64;
    // B_d = 1 Gbps, 100 Mbps background: B_p starts at 900 Mbps.
    let mut sc = SpeedControl::new(SpeedConfig::default(), G, 200_000, 100 * M, 0);
    assert_eq!(sc.planned_bps(), 900 * M);
    sc.start_request(3);
    assert_eq!(sc.hub_rates_bps(), &[300 * M; 3]);
    // Period 1: hubs send 0.25, 0.375 and 0.5 MB in 10 ms (200, 300, 400 Mbps);
    // no report arrived: B_p holds; hub 0 under (eq 4), hub 2 over (eq 3).
    for (h, b) in [(0, 250_000), (1, 375_000), (2, 500_000)] {
        sc.on_hub_bytes(h, b);
    }
    assert_eq!(sc.next_period_ns(), 10 * ms);
    let o = sc.on_period(10 * ms);
    assert_eq!(
        (o.step, o.received_bps, o.planned_bps),
        (PlanStep::Held, 900 * M, 900 * M)
    );
    assert_eq!(sc.hub_rates_bps(), &[200 * M, 300 * M, 400 * M]);
    // A report measured at 5 ms arrives at 12 ms (late): q / S_a = 0.5 → eq 5.
    sc.on_queue_report(QueueReport {
        queue_bytes: 100_000,
        measured_at_ns: 5 * ms,
    });
    sc.on_hub_bytes(0, 1_125_000); // 900 Mbps received
    let o = sc.on_period(20 * ms);
    assert_eq!((o.step, o.planned_bps), (PlanStep::Decreased, 810 * M));
    assert_eq!(sc.hub_rates_bps().iter().sum::<u64>(), 810 * M);
    // Used once: the next period without a report holds.
    assert_eq!(sc.on_period(30 * ms).step, PlanStep::Held);
    // A report older than two periods is ignored; an older one than kept is dropped.
    sc.on_queue_report(QueueReport {
        queue_bytes: 0,
        measured_at_ns: 15 * ms,
    });
    sc.on_queue_report(QueueReport {
        queue_bytes: 150_000,
        measured_at_ns: 14 * ms,
    });
    assert_eq!(sc.on_period(40 * ms).step, PlanStep::Held);
    // A fresh empty queue: eq 6 with B_a = 0.5 MB / 10 ms = 400 Mbps: +80 Mbps.
    sc.on_queue_report(QueueReport {
        queue_bytes: 0,
        measured_at_ns: 45 * ms,
    });
    sc.on_hub_bytes(1, 500_000);
    let o = sc.on_period(50 * ms);
    assert_eq!((o.step, o.planned_bps), (PlanStep::Increased, 890 * M));
    // A finished hub's share goes to the others; the sum stays B_p.
    sc.hub_done(1);
    assert_eq!(sc.hub_rate_bps(1), 0);
    assert_eq!(sc.hub_rates_bps().iter().sum::<u64>(), 890 * M);
    assert_eq!(sc.hub_window_bytes(0, 100_000), sc.hub_rate_bps(0) / 80_000);
}

#[test]
fn speed_control_keeps_the_sum_and_never_exceeds_b_d() {
    let mut rng = Rng::new(23);
    for _ in 0..50 {
        let bd = rng.range_inclusive(100, 10_000) * M;
        let sa = rng.range_inclusive(10_000, 1_000_000);
        let mut sc = SpeedControl::new(SpeedConfig::default(), bd, sa, rng.below(bd / 2), 0);
        let mut now = 0;
        for _req in 0..10 {
            let hubs = rng.range_inclusive(1, 30) as usize;
            sc.start_request(hubs);
            let mut done = BTreeSet::new();
            for _ in 0..rng.range_inclusive(1, 6) {
                for h in 0..hubs {
                    let rate = if rng.below(2) == 0 {
                        sc.hub_rate_bps(h) / 10
                    } else {
                        sc.hub_rate_bps(h)
                    };
                    sc.on_hub_bytes(h, rate / 800); // 10 ms worth
                }
                if rng.below(3) != 0 {
                    sc.on_queue_report(QueueReport {
                        queue_bytes: rng.below(sa + sa / 4),
                        measured_at_ns: now + rng.below(10_000_000),
                    });
                }
                now = sc.next_period_ns() + rng.below(100_000);
                let o = sc.on_period(now);
                assert!(o.planned_bps <= bd, "B_p above B_d");
                assert_eq!(sc.hub_rates_bps().iter().sum::<u64>(), sc.planned_bps());
                let h = rng.below(hubs as u64) as usize;
                if rng.below(4) == 0 && done.len() + 1 < hubs && done.insert(h) {
                    sc.hub_done(h);
                    assert_eq!(sc.hub_rates_bps().iter().sum::<u64>(), sc.planned_bps());
                }
            }
        }
    }
}

// ----------------------------------------------------------- redirection

/// Replicas as a table: object -> holders; server -> hub.
struct Table {
    holders: BTreeMap<u32, Vec<u32>>,
    hub: BTreeMap<u32, u32>,
}

impl ReplicaMap for Table {
    fn holders(&self, object: u32) -> &[u32] {
        self.holders.get(&object).map_or(&[], |v| v.as_slice())
    }
    fn hub_of(&self, server: u32) -> Option<u32> {
        self.hub.get(&server).copied()
    }
}

#[test]
fn redirection_worked_example() {
    // Hub 0: 10 queries at 1 Mbps, 1,000-B objects: p = 80 ms. Hub 1: 2 at
    // 1 Mbps: 16 ms. Mean 48 ms. Objects 5..10 of hub 0 have a replica on
    // server 100 (hub 1's swarm), the others on server 200 (no hub).
    let pending: Vec<_> = (0..10)
        .map(|o| PendingQuery {
            hub: 0,
            object: o,
            server: 1,
        })
        .chain((10..12).map(|o| PendingQuery {
            hub: 1,
            object: o,
            server: 100,
        }))
        .collect();
    let holders = (0..10)
        .map(|o| (o, vec![1, if o >= 5 { 100 } else { 200 }]))
        .collect();
    let table = Table {
        holders,
        hub: [(1, 0), (100, 1)].into_iter().collect(),
    };
    let mut r = Redirector::new();
    let mut out = Vec::new();
    let s = r.plan(&[M, M], &pending, 1000, &table, &mut out);
    assert_eq!((s.mean_progress_ns, s.low, s.high), (48_000_000, 1, 1));
    // From the tail: 9, 8, 7, 6 move; then hub 0 is at the mean (48 ms) and stops.
    let moved: Vec<_> = out.iter().map(|m| (m.object, m.to_hub, m.to_server)).collect();
    assert_eq!(moved, [(9, 1, 100), (8, 1, 100), (7, 1, 100), (6, 1, 100)]);
    assert_eq!(r.progress_after(), &[48_000_000, 48_000_000]);
}

#[test]
fn redirection_only_moves_to_replica_holders_and_stops_by_the_rule() {
    let mut rng = Rng::new(29);
    let mut r = Redirector::new();
    let mut out = Vec::new();
    for _ in 0..300 {
        let hubs = rng.range_inclusive(2, 12) as u32;
        let servers = hubs * 5;
        let hub: BTreeMap<u32, u32> = (0..servers).map(|s| (s, s % hubs)).collect();
        let objects = rng.range_inclusive(1, 200) as u32;
        let holders: BTreeMap<u32, Vec<u32>> = (0..objects)
            .map(|o| (o, (0..3).map(|_| rng.below(servers as u64 + 10) as u32).collect()))
            .collect();
        let pending: Vec<_> = (0..objects)
            .map(|o| {
                let s = holders[&o][0];
                PendingQuery {
                    hub: hub.get(&s).copied().unwrap_or(rng.below(hubs as u64) as u32),
                    object: o,
                    server: s,
                }
            })
            .collect();
        let rates: Vec<u64> = (0..hubs).map(|_| rng.below(100) * M).collect();
        let table = Table { holders, hub };
        let s = r.plan(&rates, &pending, 500, &table, &mut out);
        let start: Vec<u64> = (0..hubs)
            .map(|h| {
                let n = pending.iter().filter(|q| q.hub == h).count() as u64;
                xco_core::sicc::progress_ns(n, 500, rates[h as usize])
            })
            .collect();
        let mut seen = BTreeSet::new();
        for m in &out {
            assert!(seen.insert(m.query), "a query moved twice");
            let q = pending[m.query as usize];
            assert_eq!((q.object, q.hub), (m.object, m.from_hub));
            assert!(
                table.holders(m.object).contains(&m.to_server),
                "{m:?}: not a replica holder"
            );
            assert_ne!(m.to_server, q.server);
            assert_eq!(table.hub_of(m.to_server), Some(m.to_hub));
            assert!(
                start[m.from_hub as usize] > s.mean_progress_ns,
                "moved from a low-progress hub"
            );
            assert!(
                start[m.to_hub as usize] < s.mean_progress_ns,
                "moved to a high-progress hub"
            );
        }
        // The rule stops: a hub that gave a query was still low-progress before it.
        let mut left = start.clone();
        let mut count: Vec<u64> = (0..hubs)
            .map(|h| pending.iter().filter(|q| q.hub == h).count() as u64)
            .collect();
        for m in &out {
            assert!(
                left[m.from_hub as usize] > s.mean_progress_ns,
                "moved after reaching the mean"
            );
            assert!(
                left[m.to_hub as usize] < s.mean_progress_ns,
                "moved to a hub no longer high"
            );
            count[m.from_hub as usize] -= 1;
            count[m.to_hub as usize] += 1;
            for h in [m.from_hub, m.to_hub] {
                left[h as usize] = xco_core::sicc::progress_ns(count[h as usize], 500, rates[h as usize]);
            }
        }
        assert_eq!(left, r.progress_after());
    }
}

// --------------------------------------------------------------- SW

#[test]
fn sliding_window_grows_per_response_and_halves_on_loss() {
    let mut sw = SlidingWindow::new(SwConfig::default());
    sw.start(20);
    let drain = |sw: &mut SlidingWindow| std::iter::from_fn(|| sw.next_query()).collect::<Vec<_>>();
    assert_eq!(drain(&mut sw), [0]);
    sw.on_response(0);
    assert_eq!(sw.window(), 2);
    assert_eq!(drain(&mut sw), [1, 2]);
    sw.on_response(1);
    sw.on_response(2);
    assert_eq!(sw.window(), 4);
    assert_eq!(drain(&mut sw), [3, 4, 5, 6]);
    assert!(sw.on_loss(4)); // 4 -> 2
    assert_eq!(sw.window(), 2);
    assert!(!sw.on_loss(6), "a loss of the same window shrinks once");
    assert_eq!(sw.window(), 2);
    assert_eq!(drain(&mut sw), Vec::<u32>::new(), "4 in flight, window 2");
    for i in [3, 4, 5] {
        sw.on_response(i);
    }
    assert_eq!((sw.window(), sw.in_flight()), (5, 1));
    assert_eq!(drain(&mut sw), [7, 8, 9, 10]);
    assert!(sw.on_loss(8), "a query sent after the shrink may shrink again");
    assert_eq!(sw.window(), 2);
    sw.on_loss(9);
    assert_eq!(sw.window(), 2);
    // Never below the minimum; the window carries over to the next request.
    let mut sw = SlidingWindow::new(SwConfig::default());
    sw.start(3);
    sw.next_query();
    sw.on_loss(0);
    assert_eq!(sw.window(), 1);
    sw.on_response(0);
    while let Some(i) = sw.next_query() {
        sw.on_response(i);
    }
    assert!(sw.is_done());
    let w = sw.window();
    sw.start(5);
    assert_eq!(sw.window(), w);
    sw.reset_window();
    assert_eq!(sw.window(), 1);
}

// --------------------------------------------------------------- ICTCP

/// The rule of ICTCP's per-RTT check, recomputed from the receiver's state
/// before the check: what must happen.
fn ictcp_expected(
    cfg: &IctcpConfig,
    bm: u64,
    rwnd: u32,
    rtt_ns: u64,
    over_before: u32,
) -> (&'static str, u32) {
    let be = bm.max(rwnd as u64 * 8_000_000_000 / rtt_ns) as f64;
    let db = (be - bm as f64) / be;
    if db <= 0.1 || db <= cfg.mss_bytes as f64 / rwnd as f64 {
        ("grow", 0)
    } else if db > 0.5 {
        ("shrink?", over_before + 1)
    } else {
        ("keep", 0)
    }
}

#[test]
fn ictcp_window_moves_as_its_rules_say() {
    let cfg = IctcpConfig::default();
    let mss = cfg.mss_bytes;
    let rtt = 100_000u64; // 100 us
    let mut rx = IctcpReceiver::new(cfg, G, 0);
    let c = rx.open(rtt, 0);
    assert_eq!(rx.window_bytes(c), 2 * mss);
    let mut t = 0u64;
    let mut over = 0u32;
    let (mut grew, mut blocked_first, mut shrank) = (0, 0, 0);
    let mut last_growth: Option<u64> = None;
    // Phase 1 (checks 0..40): the sender fills the window every RTT.
    // Phase 2 (checks 40..80): it sends a tenth of the window.
    for k in 0..80 {
        let rwnd = rx.window_bytes(c);
        let bytes = if k < 40 { rwnd as u64 } else { rwnd as u64 / 10 };
        rx.on_data(c, bytes, t + 1);
        let next = t + rtt;
        // Run everything before the check, then the check itself.
        // A boundary at the check's instant runs before it, so the state
        // after handle_timeout(next) is the state the check saw.
        rx.handle_timeout(next);
        let second_at_check = rx.in_second_subslot();
        let bs = bytes * 8_000_000_000 / rtt;
        let bm_after = rx.measured_bps(c);
        // b_m := max(b_s, 0.75 b_m + 0.25 b_s) cannot fall below the sample.
        assert!(bm_after >= bs);
        let (rule, over_next) = ictcp_expected(&cfg, bm_after, rwnd, rtt, over);
        let now_w = rx.window_bytes(c);
        match (rule, rx.last_adjust(c)) {
            ("grow", Adjust::Increased) => {
                assert_eq!(now_w, rwnd + mss, "grows by one MSS");
                assert!(second_at_check, "grows only in the second sub-slot");
                if let Some(l) = last_growth {
                    assert!(next - l >= 2 * rtt, "at most once per 2 RTT");
                }
                last_growth = Some(next);
                grew += 1;
            }
            ("grow", Adjust::IncreaseBlocked) => {
                assert_eq!(now_w, rwnd);
                blocked_first += 1;
            }
            ("shrink?", Adjust::Decreased) => {
                assert!(over_next >= 3, "shrinks only after three RTTs above gamma2");
                assert_eq!(now_w, (rwnd - mss).max(2 * mss), "by one MSS, not below 2 MSS");
                shrank += 1;
            }
            ("shrink?", Adjust::Kept) => {
                assert!(over_next < 3);
                assert_eq!(now_w, rwnd);
            }
            ("keep", Adjust::Kept) => assert_eq!(now_w, rwnd),
            (r, a) => panic!("check {k}: rule says {r}, receiver did {a:?}"),
        }
        over = over_next;
        if k < 40 {
            assert_eq!(shrank, 0, "a full window never shrinks");
        }
        t = next;
    }
    assert!(grew >= 5, "the window grew ({grew})");
    assert!(
        blocked_first > 0,
        "some growth waited for the second sub-slot or spacing"
    );
    assert!(shrank >= 3, "an idle sender's window shrank ({shrank})");
    assert!(rx.window_bytes(c) >= 2 * mss);
}

#[test]
fn ictcp_quota_is_alpha_c_minus_measured_traffic() {
    let cfg = IctcpConfig::default();
    let mut rx = IctcpReceiver::new(cfg, G, 0);
    // First sub-slot of 100 us (no connection yet): 5,000 B of other traffic = 400 Mbps.
    rx.on_other_data(5_000, 10);
    assert!(!rx.in_second_subslot());
    rx.handle_timeout(100_000);
    assert!(rx.in_second_subslot());
    assert_eq!(rx.available_bps(), 900 * M - 400 * M);
    assert_eq!(rx.quota_bps(), 500 * M);
    // Traffic in the second sub-slot is not measured; the slot ends at 200 us.
    rx.on_other_data(50_000, 150_000);
    rx.handle_timeout(200_000);
    assert!(!rx.in_second_subslot());
    rx.handle_timeout(300_000);
    assert_eq!(rx.available_bps(), 900 * M);
    // Saturated link: no quota, no growth.
    let mut rx = IctcpReceiver::new(cfg, G, 0);
    let c = rx.open(100_000, 0);
    rx.on_other_data(20_000, 1); // 1.6 Gbps in the first sub-slot
    rx.on_data(c, 2 * 1460, 2);
    rx.handle_timeout(100_000);
    assert_eq!(rx.quota_bps(), 0);
    assert_eq!(rx.last_adjust(c), Adjust::IncreaseBlocked);
    assert_eq!(rx.window_bytes(c), 2 * 1460);
}

#[test]
fn ictcp_grows_a_connection_at_most_once_per_two_rtts() {
    // A long sub-slot (T weighted toward a busy 1-ms connection) holds many
    // 100-us checks of a small connection: the spacing rule, not the
    // sub-slot, limits its growth.
    let cfg = IctcpConfig::default();
    let rtt = 100_000u64;
    let mut rx = IctcpReceiver::new(cfg, 10 * G, 0);
    let a = rx.open(rtt, 0);
    let b = rx.open(10 * rtt, 0);
    let mut growth = Vec::new();
    for k in 0..40u64 {
        let t = k * rtt;
        let w = rx.window_bytes(a);
        rx.on_data(a, w as u64, t + 1);
        rx.on_data(b, 40_000, t + 2);
        rx.handle_timeout(t + rtt);
        if rx.window_bytes(a) > w {
            assert_eq!(rx.window_bytes(a), w + cfg.mss_bytes);
            growth.push(t + rtt);
        }
    }
    assert!(
        rx.subslot_ns() > 3 * rtt,
        "T is weighted toward the busy connection"
    );
    let gaps: Vec<u64> = growth.windows(2).map(|g| g[1] - g[0]).collect();
    assert!(
        gaps.iter().all(|&g| g >= 2 * rtt),
        "growth spaced by 2 RTT: {gaps:?}"
    );
    assert!(
        gaps.contains(&(2 * rtt)),
        "back-to-back growth inside one sub-slot: {gaps:?}"
    );
}

#[test]
fn an_idle_ictcp_connection_at_its_floor_sleeps_and_wakes_on_the_rtt_grid() {
    // An idle connection whose window has fallen to the floor stops being
    // checked each RTT (its checks would change nothing); when data comes
    // its next check is still on the grid one RTT apart from its last, and
    // the rate is measured from the last check it would have made.
    let cfg = IctcpConfig::default();
    let rtt = 100_000u64;
    let mut rx = IctcpReceiver::new(cfg, G, 0);
    let c = rx.open(rtt, 0);
    assert_eq!(rx.scheduled_checks(), 1);
    // idle for 50 RTTs: b_m decays to 0, the window falls to its floor
    rx.handle_timeout(50 * rtt);
    assert_eq!(rx.window_bytes(c), cfg.min_window_bytes);
    assert_eq!(rx.measured_bps(c), 0);
    assert_eq!(rx.last_adjust(c), Adjust::Decreased);
    // asleep: none of its checks is scheduled any more
    assert_eq!(rx.scheduled_checks(), 0);
    // data at 200.5 RTT: the checks it skipped ended at 200 RTT, so the
    // next is at 201 RTT and measures the bytes since 200 RTT
    let bytes = 1000u64;
    rx.on_data(c, bytes, 200 * rtt + rtt / 2);
    assert_eq!(rx.scheduled_checks(), 1, "awake again");
    rx.handle_timeout(201 * rtt - 1);
    assert_eq!(rx.measured_bps(c), 0, "not checked before 201 RTT");
    rx.handle_timeout(201 * rtt);
    assert_eq!(
        rx.measured_bps(c),
        bytes * 8 * 1_000_000_000 / rtt,
        "bytes over 201 - 200 RTT"
    );
}
