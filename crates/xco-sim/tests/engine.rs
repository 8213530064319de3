use xco_core::Time;
use xco_sim::engine::{Event, EventQueue};

#[test]
fn equal_time_events_pop_in_insertion_order() {
    for q in queues() {
        equal_times(q);
    }
}

fn equal_times(mut q: EventQueue) {
    q.schedule(Time(10), Event::Probe(100));
    for i in 0..50 {
        q.schedule(Time(5), Event::Probe(i));
    }
    q.schedule(Time(1), Event::Probe(999));
    assert_eq!(q.pop(), Some((Time(1), Event::Probe(999))));
    for i in 0..50 {
        assert_eq!(q.pop(), Some((Time(5), Event::Probe(i))));
    }
    assert_eq!(q.pop(), Some((Time(10), Event::Probe(100))));
    assert_eq!(q.pop(), None);
}

#[test]
fn times_pop_in_order_whatever_the_insertion_order() {
    for q in queues() {
        any_insertion_order(q);
    }
}

fn any_insertion_order(mut q: EventQueue) {
    let mut rng = xco_core::Rng::new(3);
    let mut times: Vec<u64> = (0..2000).map(|_| rng.below(5000)).collect();
    for (i, &t) in times.iter().enumerate() {
        q.schedule(Time(t), Event::Probe(i as u32));
    }
    let mut popped = Vec::new();
    while let Some((t, Event::Probe(i))) = q.pop() {
        popped.push((t.0, i));
    }
    let mut want: Vec<(u64, u32)> = times.iter().enumerate().map(|(i, &t)| (t, i as u32)).collect();
    want.sort();
    assert_eq!(popped, want, "(time, insertion) order");
    times.clear();
}

/// Queues with very different wheels: the default, a tiny one (most events
/// overflow and buckets wrap around constantly) and a coarse one (crowded buckets).
fn queues() -> Vec<EventQueue> {
    vec![
        EventQueue::new(),
        EventQueue::with_wheel(2, 6),
        EventQueue::with_wheel(12, 8),
    ]
}

#[test]
fn interleaved_pushes_and_pops_keep_time_then_insertion_order() {
    for q in queues() {
        interleaved(q);
    }
}

#[test]
fn peeking_then_scheduling_earlier_keeps_order() {
    // a driver peeks at the next event, stops short of it, then schedules
    // events before it (what `Sim::run_until` and tools do)
    for mut q in queues() {
        q.schedule(Time(1_000_000), Event::Probe(1));
        q.schedule(Time(5), Event::Probe(0));
        assert_eq!(q.pop(), Some((Time(5), Event::Probe(0))));
        assert_eq!(q.peek_time(), Some(Time(1_000_000)));
        q.schedule(Time(10), Event::Probe(2));
        q.schedule(Time(10), Event::Probe(3));
        q.schedule(Time(999_999), Event::Probe(4));
        q.schedule(Time(1_000_000), Event::Probe(5));
        let order: Vec<u32> = std::iter::from_fn(|| q.pop())
            .map(|(_, e)| match e {
                Event::Probe(i) => i,
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(order, vec![2, 3, 4, 1, 5]);
    }
}

fn interleaved(mut q: EventQueue) {
    // the simulator pattern: pop an event, schedule a few at or after its time
    let mut rng = xco_core::Rng::new(11);
    let mut tag = 0u32;
    let mut reference: Vec<(u64, u32)> = Vec::new();
    for _ in 0..8 {
        q.schedule(Time(rng.below(1000)), Event::Probe(tag));
        reference.push((0, tag));
        tag += 1;
    }
    let mut order = std::collections::HashMap::new();
    let mut seq = 0u64;
    for &(_, t) in &reference {
        order.insert(t, seq);
        seq += 1;
    }
    let mut last: Option<(u64, u64)> = None;
    let mut n = 0;
    while let Some((t, Event::Probe(i))) = q.pop() {
        let key = (t.0, order[&i]);
        if let Some(l) = last {
            assert!(key > l, "{key:?} popped after {l:?}");
        }
        last = Some(key);
        n += 1;
        if n < 20_000 {
            for _ in 0..rng.below(3) + if q.is_empty() { 1 } else { 0 } {
                let dt = [0, 0, 1, 7, 100, 3000, 1 << 20, 1 << 34][rng.below(8) as usize];
                q.schedule(Time(t.0 + dt), Event::Probe(tag));
                order.insert(tag, seq);
                seq += 1;
                tag += 1;
            }
        }
    }
    assert!(n >= 20_000);
}

#[test]
fn cancelled_timers_never_fire() {
    let mut q = EventQueue::new();
    let mut keys = Vec::new();
    for i in 0..100u32 {
        keys.push(q.schedule_cancellable(Time(i as u64 % 7), Event::Probe(i)));
    }
    for (i, k) in keys.iter().enumerate() {
        if i % 3 == 0 {
            q.cancel(*k);
        }
    }
    let mut fired = Vec::new();
    while let Some((_, Event::Probe(i))) = q.pop() {
        fired.push(i);
    }
    assert_eq!(fired.len(), 66);
    assert!(fired.iter().all(|i| i % 3 != 0));
    assert_eq!(q.events_popped(), 66);
}

#[test]
fn arrivals_ahead_are_seen_past_the_bucket_being_popped() {
    // 1,024-ps buckets: two arrivals in bucket 1, three in bucket 2 (pushed
    // out of time order), a timer event in bucket 3
    let mut q = EventQueue::with_wheel(10, 8);
    q.schedule_arrival(Time(1100), 1, 10);
    q.schedule_arrival(Time(1200), 2, 20);
    q.schedule_arrival(Time(2900), 5, 50);
    q.schedule_arrival(Time(2100), 3, 30);
    q.schedule_arrival(Time(2500), 4, 40);
    q.schedule(Time(3100), Event::Sample);
    assert_eq!(q.pop().map(|(t, _)| t), Some(Time(1100)));
    // the run holds the 1,200 ps arrival; past it the next bucket, unsorted
    assert_eq!(q.arrival_ahead(0), Some((2, 20)));
    let ahead: Vec<_> = (1..4).map(|d| q.arrival_ahead(d)).collect();
    assert_eq!(ahead, [Some((5, 50)), Some((3, 30)), Some((4, 40))]);
    assert_eq!(q.arrival_ahead(4), None, "only the next bucket is looked into");
    // looking ahead changes nothing: the events pop in time order
    let times: Vec<u64> = std::iter::from_fn(|| q.pop().map(|(t, _)| t.0)).collect();
    assert_eq!(times, [1200, 2100, 2500, 2900, 3100]);
}
