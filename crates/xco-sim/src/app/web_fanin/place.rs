//! Where the web fan-in's servers sit: each host's rack (the switch its NIC
//! links to) and aggregation group (that switch's lowest-numbered
//! neighbouring switch), the ports that leave a rack (for counting
//! inter-rack packets) and the port toward each host (for what reaches a
//! front-end). Read once from the network when the app is built.

use crate::net::topology::NodeKind;
use crate::net::Net;

/// Racks and aggregation groups of every host, dense indices.
#[derive(Clone, Debug, Default)]
pub struct Placement {
    /// Per node: its rack index (`u32::MAX` for a switch).
    pub rack_of: Vec<u32>,
    /// Per rack: its aggregation group index.
    pub agg_of_rack: Vec<u32>,
    /// Ports from a rack's switch to another switch (packets leaving a rack).
    pub uplink_ports: Vec<u32>,
    /// Per node: the port of its rack's switch toward it (`u32::MAX` for a switch).
    pub down_port: Vec<u32>,
    /// Per node: its NIC port (`u32::MAX` for a switch).
    pub nic_port: Vec<u32>,
    /// Per rack: the ports from other switches into its switch (the
    /// aggregation router's ports toward the rack).
    pub rack_in_ports: Vec<Vec<u32>>,
}

impl Placement {
    /// Read `net`. A host whose NIC links to another host has no rack and is refused.
    pub fn of(net: &Net) -> Result<Placement, String> {
        let n = net.nodes.len();
        let mut edge_of = vec![u32::MAX; n];
        let mut nic_port = vec![u32::MAX; n];
        for (i, node) in net.nodes.iter().enumerate() {
            if node.kind == NodeKind::Host {
                let p = &net.ports[node.nic as usize];
                if net.nodes[p.to as usize].kind != NodeKind::Switch {
                    return Err(format!("host {} is not linked to a switch", node.name));
                }
                edge_of[i] = p.to;
                nic_port[i] = node.nic;
            }
        }
        // dense rack index per edge switch, in node order
        let mut rack_of_switch = vec![u32::MAX; n];
        let mut racks = 0u32;
        for i in 0..n {
            if edge_of[i] != u32::MAX && rack_of_switch[edge_of[i] as usize] == u32::MAX {
                rack_of_switch[edge_of[i] as usize] = racks;
                racks += 1;
            }
        }
        let mut up_switch = vec![u32::MAX; n]; // per edge switch: its lowest-numbered switch neighbour
        let mut uplink_ports = Vec::new();
        let mut down_port = vec![u32::MAX; n];
        let mut rack_in_ports = vec![Vec::new(); racks as usize];
        for (pi, p) in net.ports.iter().enumerate() {
            let (from, to) = (p.from as usize, p.to as usize);
            if rack_of_switch[to] != u32::MAX && net.nodes[from].kind == NodeKind::Switch {
                rack_in_ports[rack_of_switch[to] as usize].push(pi as u32);
            }
            if rack_of_switch[from] == u32::MAX {
                continue;
            }
            match net.nodes[to].kind {
                NodeKind::Switch => {
                    uplink_ports.push(pi as u32);
                    up_switch[from] = up_switch[from].min(to as u32);
                }
                NodeKind::Host => {
                    if edge_of[to] == from as u32 {
                        down_port[to] = pi as u32;
                    }
                }
            }
        }
        // aggregation groups: dense over the distinct upper switches (a rack
        // with none, a star's only switch, is its own group)
        let mut agg_index = vec![u32::MAX; n];
        let mut agg_of_rack = vec![0u32; racks as usize];
        let mut aggs = 0u32;
        for s in 0..n {
            let r = rack_of_switch[s];
            if r == u32::MAX {
                continue;
            }
            let key = if up_switch[s] == u32::MAX {
                s
            } else {
                up_switch[s] as usize
            };
            if agg_index[key] == u32::MAX {
                agg_index[key] = aggs;
                aggs += 1;
            }
            agg_of_rack[r as usize] = agg_index[key];
        }
        let rack_of = (0..n)
            .map(|i| {
                if edge_of[i] == u32::MAX {
                    u32::MAX
                } else {
                    rack_of_switch[edge_of[i] as usize]
                }
            })
            .collect();
        Ok(Placement {
            rack_of,
            agg_of_rack,
            uplink_ports,
            down_port,
            nic_port,
            rack_in_ports,
        })
    }

    /// Host `h`'s aggregation group.
    pub fn agg_of(&self, h: u32) -> u32 {
        self.agg_of_rack[self.rack_of[h as usize] as usize]
    }
}
