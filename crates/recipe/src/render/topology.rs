//! Where srtctl puts workers and which ports it hands them (docs/recipe.md, "Rendering"):
//! endpoints (one per worker) packed onto nodes in the order prefill, decode, agg, and one
//! process per endpoint node with ports from per-node and job-wide counters.

use std::collections::HashMap;

/// One worker's place: its nodes (absolute node indices) and the GPUs it uses on each.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Endpoint {
    pub mode: &'static str,
    pub index: usize,
    pub nodes: Vec<usize>,
    pub gpus: Vec<usize>,
}

/// How many workers of one mode, and how many GPUs each.
#[derive(Debug, Clone, Copy)]
pub(super) struct Shape {
    pub mode: &'static str,
    pub workers: usize,
    pub gpus: usize,
}

/// Packs `shapes` (prefill, decode, agg order) onto nodes from `first_node`. Workers of a
/// node or more take whole nodes; smaller ones share a node until it is full (or take one each
/// with `spread`); zero-GPU ones take no GPUs on the current node. Decode starts on a fresh node after a partly used one unless `colocate`,
/// or unless no node is left (`nodes` counts the worker nodes).
pub(super) fn allocate(
    shapes: &[Shape],
    gpn: usize,
    first_node: usize,
    nodes: usize,
    spread: bool,
    colocate: bool,
) -> Vec<Endpoint> {
    let gpn = gpn.max(1);
    let mut out = Vec::new();
    let (mut node, mut offset) = (0usize, 0usize);
    for shape in shapes {
        if shape.mode == "decode" && !colocate && offset > 0 && node + 1 < nodes {
            node += 1;
            offset = 0;
        }
        let gpus = shape.gpus;
        for index in 0..shape.workers {
            if gpus == 0 {
                // More workers than the role has GPUs: each is computed zero GPUs, takes none
                // and leaves the node open for the next, as srtctl packs them (docs/recipe.md,
                // "Rendering").
                out.push(Endpoint {
                    mode: shape.mode,
                    index,
                    nodes: vec![first_node + node],
                    gpus: Vec::new(),
                });
                if spread {
                    node += 1;
                    offset = 0;
                }
                continue;
            }
            if gpus >= gpn {
                // Whole nodes, from the current one on (a partly used node included, as srtctl).
                let span = gpus.div_ceil(gpn);
                out.push(Endpoint {
                    mode: shape.mode,
                    index,
                    nodes: (node..node + span).map(|n| first_node + n).collect(),
                    gpus: (0..gpn).collect(),
                });
                node += span;
                continue;
            }
            if offset + gpus > gpn {
                node += 1;
                offset = 0;
            }
            out.push(Endpoint {
                mode: shape.mode,
                index,
                nodes: vec![first_node + node],
                gpus: (offset..offset + gpus).collect(),
            });
            offset += gpus;
            if offset >= gpn || spread {
                node += 1;
                offset = 0;
            }
        }
    }
    out
}

/// srtctl's port plan: HTTP (6100, stride 32), bootstrap (7200) and DP RPC (8400) ports count
/// per node; KV-event (5200) and NIXL (5400) ports count job-wide.
#[derive(Debug, Default)]
pub(super) struct Ports {
    http: HashMap<usize, u32>,
    bootstrap: HashMap<usize, u32>,
    dp_rpc: HashMap<usize, u32>,
    kv_events: u32,
    nixl: u32,
}

fn take(counter: &mut u32, n: u32) -> u32 {
    let at = *counter;
    *counter += n;
    at
}

impl Ports {
    pub(super) fn http(&mut self, node: usize) -> u32 {
        6100 + 32 * take(self.http.entry(node).or_default(), 1)
    }
    pub(super) fn bootstrap(&mut self, node: usize) -> u32 {
        7200 + take(self.bootstrap.entry(node).or_default(), 1)
    }
    pub(super) fn dp_rpc(&mut self, node: usize) -> u32 {
        8400 + take(self.dp_rpc.entry(node).or_default(), 1)
    }
    /// The first of `n` consecutive KV-event ports.
    pub(super) fn kv_events(&mut self, n: u32) -> u32 {
        5200 + take(&mut self.kv_events, n.max(1))
    }
    /// The first of `n` consecutive NIXL side-channel ports.
    pub(super) fn nixl(&mut self, n: u32) -> u32 {
        5400 + take(&mut self.nixl, n)
    }
}

/// One launched process of an endpoint.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Slot {
    /// Index into the endpoint list.
    pub endpoint: usize,
    pub node: usize,
    /// Position of `node` among the endpoint's nodes, or the first DP rank the process owns.
    pub rank: usize,
    pub gpus: Vec<usize>,
    /// `DYN_SYSTEM_PORT` (7500 on, one per process).
    pub sys_port: u32,
    /// 0 on non-leader nodes.
    pub http_port: u32,
    pub bootstrap_port: Option<u32>,
    pub kv_events_port: u32,
    pub nixl_port: u32,
    pub dp_rpc_port: Option<u32>,
}

/// One process per endpoint node: the leader gets an HTTP port, prefill endpoints one
/// bootstrap port on the leader, every node a KV-event and a NIXL port.
pub(super) fn one_per_node(
    endpoint: usize,
    ep: &Endpoint,
    ports: &mut Ports,
    sys_port: &mut u32,
) -> Vec<Slot> {
    let bootstrap = (ep.mode == "prefill").then(|| ports.bootstrap(ep.nodes[0]));
    let mut out = Vec::new();
    for (rank, &node) in ep.nodes.iter().enumerate() {
        let http_port = if rank == 0 { ports.http(node) } else { 0 };
        out.push(Slot {
            endpoint,
            node,
            rank,
            gpus: ep.gpus.clone(),
            sys_port: *sys_port,
            http_port,
            bootstrap_port: bootstrap,
            kv_events_port: ports.kv_events(1),
            nixl_port: ports.nixl(1),
            dp_rpc_port: None,
        });
        *sys_port += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(mode: &'static str, workers: usize, gpus: usize) -> Shape {
        Shape {
            mode,
            workers,
            gpus,
        }
    }

    /// Each endpoint's first node and its GPUs.
    fn places(eps: &[Endpoint]) -> Vec<(usize, Vec<usize>)> {
        eps.iter().map(|e| (e.nodes[0], e.gpus.clone())).collect()
    }

    #[test]
    fn partial_workers_share_a_node_and_decode_starts_fresh() {
        let pd = [shape("prefill", 1, 2), shape("decode", 2, 2)];
        let eps = allocate(&pd, 8, 0, 2, false, false);
        assert_eq!(
            places(&eps),
            vec![(0, vec![0, 1]), (1, vec![0, 1]), (1, vec![2, 3])]
        );
        // Colocated, decode continues on the prefill node.
        let eps = allocate(&pd, 8, 0, 2, false, true);
        assert_eq!(eps[1].nodes, vec![0]);
        assert_eq!(eps[1].gpus, vec![2, 3]);
    }

    #[test]
    fn large_workers_span_nodes_and_spread_takes_one_node_each() {
        let eps = allocate(&[shape("agg", 2, 16)], 8, 1, 4, false, false);
        assert_eq!(eps[0].nodes, vec![1, 2]);
        assert_eq!(eps[1].nodes, vec![3, 4]);
        let eps = allocate(&[shape("agg", 2, 2)], 8, 0, 2, true, false);
        assert_eq!((eps[0].nodes[0], eps[1].nodes[0]), (0, 1));
    }

    #[test]
    fn ports_count_per_node_and_job_wide() {
        let mut ports = Ports::default();
        assert_eq!(
            (ports.http(0), ports.http(0), ports.http(1)),
            (6100, 6132, 6100)
        );
        assert_eq!((ports.kv_events(4), ports.kv_events(1)), (5200, 5204));
        assert_eq!((ports.nixl(16), ports.nixl(1)), (5400, 5416));
        assert_eq!((ports.dp_rpc(3), ports.dp_rpc(3)), (8400, 8401));
        let ep = Endpoint {
            mode: "prefill",
            index: 0,
            nodes: vec![2, 3],
            gpus: (0..4).collect(),
        };
        let mut sys = 7500;
        let slots = one_per_node(0, &ep, &mut ports, &mut sys);
        assert_eq!(slots.len(), 2);
        assert_eq!((slots[0].http_port, slots[1].http_port), (6100, 0));
        assert_eq!(slots[1].bootstrap_port, Some(7200));
        assert_eq!((slots[1].sys_port, sys), (7501, 7502));
    }

    #[test]
    fn zero_gpu_workers_take_no_gpus_and_stay_on_the_node() {
        let eps = allocate(
            &[shape("prefill", 3, 0), shape("decode", 2, 2)],
            4,
            0,
            2,
            false,
            false,
        );
        assert_eq!(
            places(&eps),
            vec![
                (0, vec![]),
                (0, vec![]),
                (0, vec![]),
                (0, vec![0, 1]),
                (0, vec![2, 3])
            ]
        );
        let eps = allocate(&[shape("prefill", 2, 0)], 4, 0, 2, true, false);
        assert_eq!((eps[0].nodes[0], eps[1].nodes[0]), (0, 1));
    }
}
