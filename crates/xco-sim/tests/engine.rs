use xco_core::Time;
use xco_sim::engine::{Event, EventQueue};

#[test]
fn equal_time_events_pop_in_insertion_order() {
    let mut q = EventQueue::new();
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
    let mut q = EventQueue::new();
    let mut rng = xco_core::Rng::new(3);
    let mut times: Vec<u64> = (0..2000).map(|_| rng.below(500)).collect();
    for (i, &t) in times.iter().enumerate() {
        q.schedule(Time(t), Event::Probe(i as u32));
    }
    let mut last = (0u64, 0u32);
    let mut n = 0;
    while let Some((t, Event::Probe(i))) = q.pop() {
        assert!((t.0, i) >= last, "out of order: {:?} after {:?}", (t.0, i), last);
        last = (t.0, i);
        n += 1;
    }
    assert_eq!(n, 2000);
    times.sort();
}

#[test]
fn cancelled_timers_never_fire() {
    let mut q = EventQueue::new();
    let mut keys = Vec::new();
    for i in 0..100u32 {
        keys.push(q.schedule(Time(i as u64 % 7), Event::Probe(i)));
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
