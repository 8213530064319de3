#!/usr/bin/env python3
"""The ns-3 side of ``scripts/ns3_differential.py``: workload (a) in ns-3.44.

Run with a Python that has the PyPI ``ns3`` package (3.44, cppyy bindings):

    /work/ns3venv/bin/python scripts/ns3_incast.py --points 2,32 --rounds 5
    /work/ns3venv/bin/python scripts/ns3_incast.py --points 64 --framing ppp

    /work/ns3venv/bin/python scripts/ns3_incast.py --points 32 --variant loss-exit-bytes,rtt-every-ack

Prints one JSON line per point (``n``, ``goodput_mbps``, ``timeouts``,
``drops``, ``switch_drops``, ``fast_recoveries``, ``rtt_samples``,
``ssthresh_changes``, ``rounds_done``, ``round_ms_max``, ``round_ms``,
``wall_s``). Without ``--config-json`` the settings are ``SETTINGS`` of
ns3_differential.py, translated by its ``ns3_config`` with the ``--variant``
names.

The topology, the incast application and the counters are C++ compiled at
start-up through cppyy (``cppyy.cppdef``): callbacks on every packet stay in
C++, and the whole run is one call. Start-up (loading ns-3 and compiling)
takes about 12 s; each point after that costs only its simulation.

- ``sa`` and ``sb`` are IPv4 routers (global routing); ``a0..`` hang off
  ``sa``, the client ``b0`` off ``sb``; every link point-to-point with the
  same rate, delay and InterframeGap. Every device transmit queue is a
  DropTail queue in bytes (switch ports and host NICs their own limits); the
  traffic-control queue discs the address helper installs are removed, so
  the device queue is the only buffer.
- The application is ours (ns-3 ships none): at t = 0 the client opens one
  TCP connection to each server; when all are up, round 1 starts: the client
  writes the request (``request_bytes``) on every connection; a server that
  has read a whole request writes one SRU (``sru_bytes``); when every SRU of
  the round has arrived, the next round starts. Goodput is rounds x N x SRU
  bits over the time from the start of round 1 to the end of the last round,
  as xco's incast app measures it.
- Timeouts: a TcpNewReno subclass counts ``CwndEvent(CA_EVENT_LOSS)`` (once per
  ``TcpSocketBase::ReTxTimeout`` that retransmits) and entries into
  ``CA_RECOVERY`` (fast recoveries), over every socket.
- Sockets: an ``XSocket`` (a TcpSocketBase subclass, made as
  ``TcpL4Protocol::CreateSocket`` makes sockets; accepted ones by its
  ``Fork``). With no variant its hooks only forward: results are those of
  plain TcpSocketBase to the last digit.
- Variants (``NS3_VARIANTS`` of ns3_differential.py), each a few lines here:
  ``loss-exit-bytes`` and ``ca-bytes`` in ``CountingNewReno::IncreaseWindow``
  (fed the bytes of each ACK by ``XSocket::ProcessAck``), ``rto-ssthresh`` in
  its ``CwndEvent(CA_EVENT_LOSS)`` (``ssthresh_changes`` counts the RTOs where
  it set another value than ns-3 had), ``rtt-every-ack`` in
  ``XSocket::OnTx``/``DoForwardUp``/``EstimateRtt`` (a ``TsTag`` on every
  packet; ``rtt_samples`` counts the samples), ``limited-transmit`` an
  attribute.
- Drops: the ``Drop`` trace of every device queue plus the ``TcDrop`` trace of
  every node's traffic-control layer (a packet refused because the device
  queue is stopped).

Exit status 2 for bad command-line input, 1 if a run fails.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ns3_differential import (  # noqa: E402
    NS3_VARIANTS,
    SETTINGS,
    UsageError,
    ns3_config,
    parse_points,
    parse_variants,
)

CPP = r"""
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"
#include <map>
#include <vector>

namespace xcodiff {
using namespace ns3;

uint64_t g_timeouts = 0;
uint64_t g_fast_recoveries = 0;
uint64_t g_switch_drops = 0;
uint64_t g_host_drops = 0;
uint64_t g_rtt_samples = 0;           // RTT samples taken by the rtt-every-ack variant
uint64_t g_ssthresh_changes = 0;      // RTOs where rto-ssthresh set another ssthresh than ns-3's

// ns-3-only variants (NS3_VARIANTS in ns3_differential.py; docs/ns3-differential.md,
// "What each difference costs"). All false: ns-3.44 as shipped.
bool g_lossExitBytes = false;  // slow start grows by min(bytes acked, 2 MSS) on every ACK (RFC 3465)
bool g_caBytes = false;        // congestion avoidance: one MSS per cwnd of bytes acked
bool g_rtoSsthresh = false;    // every RTO: ssthresh = max((HighTxMark - SND.UNA) / 2, 2 MSS)
bool g_rttEveryAck = false;    // an RTT sample from every new ACK via an xco-style timestamp echo

// TcpNewReno that counts retransmission timeouts and fast recoveries, and
// grows or cuts the window as xco does where a variant asks for it.
class CountingNewReno : public TcpNewReno {
  public:
    static TypeId GetTypeId() {
        static TypeId tid = TypeId("xcodiff::CountingNewReno")
                                .SetParent<TcpNewReno>()
                                .SetGroupName("Internet")
                                .AddConstructor<CountingNewReno>();
        return tid;
    }
    uint32_t m_ackBytes = 0;     // bytes the ACK being processed newly acknowledges (XSocket::ProcessAck)
    uint32_t m_caBytesAcked = 0;  // ca-bytes: bytes acked in avoidance not yet turned into growth
    CountingNewReno() {}
    CountingNewReno(const CountingNewReno& o) : TcpNewReno(o) {}
    std::string GetName() const override { return "CountingNewReno"; }
    void CwndEvent(Ptr<TcpSocketState> tcb, const TcpSocketState::TcpCAEvent_t ev) override {
        if (ev == TcpSocketState::CA_EVENT_LOSS) {
            g_timeouts++;
            // called from ReTxTimeout after ns-3 set (or, on a repeated RTO, kept) ssthresh
            if (g_rtoSsthresh) {
                uint32_t flight = static_cast<uint32_t>(tcb->m_highTxMark.Get() - tcb->m_lastAckedSeq);
                uint32_t ssthresh = std::max(flight / 2, 2 * tcb->m_segmentSize);
                if (ssthresh != tcb->m_ssThresh) g_ssthresh_changes++;
                tcb->m_ssThresh = ssthresh;
            }
            m_caBytesAcked = 0;
        }
        TcpNewReno::CwndEvent(tcb, ev);
    }
    void CongestionStateSet(Ptr<TcpSocketState> tcb, const TcpSocketState::TcpCongState_t st) override {
        if (st == TcpSocketState::CA_RECOVERY && tcb->m_congState != TcpSocketState::CA_RECOVERY) {
            g_fast_recoveries++;
        }
        TcpNewReno::CongestionStateSet(tcb, st);
    }
    // ns-3 passes whole segments only: on the ACK that ends CA_LOSS those above
    // m_recover (tcp-socket-base.cc:2226), else bytes / MSS with the remainder
    // carried over (:2033-2043). The variants use the bytes of the ACK instead.
    void IncreaseWindow(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked) override {
        uint32_t bytes = m_ackBytes;
        m_ackBytes = 0;
        bool slow_start = tcb->m_cWnd < tcb->m_ssThresh;
        if (slow_start && g_lossExitBytes) {
            tcb->m_cWnd += std::min(bytes, 2 * tcb->m_segmentSize);  // xco tcp/cc.rs NewReno::on_ack
            return;
        }
        if (!slow_start && g_caBytes) {
            m_caBytesAcked += bytes;
            if (m_caBytesAcked >= tcb->m_cWnd) {
                m_caBytesAcked -= tcb->m_cWnd;
                tcb->m_cWnd += tcb->m_segmentSize;
            }
            return;
        }
        TcpNewReno::IncreaseWindow(tcb, segmentsAcked);
    }
    Ptr<TcpCongestionOps> Fork() override { return CopyObject<CountingNewReno>(this); }
};

// The send time of a segment and the echo of the peer's, as xco stamps every
// segment (tcp/endpoint.rs, stamp) whether or not the timestamp option is on;
// a packet tag, so no byte goes on the wire.
class TsTag : public Tag {
  public:
    uint64_t val = 0, ecr = 0;
    static TypeId GetTypeId() {
        static TypeId tid = TypeId("xcodiff::TsTag").SetParent<Tag>().AddConstructor<TsTag>();
        return tid;
    }
    TypeId GetInstanceTypeId() const override { return GetTypeId(); }
    uint32_t GetSerializedSize() const override { return 16; }
    void Serialize(TagBuffer b) const override {
        b.WriteU64(val);
        b.WriteU64(ecr);
    }
    void Deserialize(TagBuffer b) override {
        val = b.ReadU64();
        ecr = b.ReadU64();
    }
    void Print(std::ostream& os) const override { os << "ts " << val << " ecr " << ecr; }
};

// TcpSocketBase with two hooks; with every variant off it only forwards.
// - ProcessAck tells CountingNewReno how many bytes the ACK acknowledges.
// - rtt-every-ack: every segment carries a TsTag; the receiver keeps ts_recent
//   as xco does (ts_val of a data segment at or below the last ACK sent, RFC
//   7323 §4.3) and echoes it in everything it sends; the sender takes an RTT
//   sample (now - echo) from every ACK of new data, retransmissions included,
//   instead of timing segments from its history with Karn's rule.
class XSocket : public TcpSocketBase {
  public:
    uint64_t m_tsRecent = 0, m_rxEcr = 0;
    SequenceNumber32 m_lastAckSent;
    bool m_ackSent = false;

    XSocket() { m_txTrace.ConnectWithoutContext(MakeCallback(&XSocket::OnTx, this)); }
    XSocket(const XSocket& o)
        : TcpSocketBase(o), m_tsRecent(o.m_tsRecent), m_lastAckSent(o.m_lastAckSent), m_ackSent(o.m_ackSent) {
        // the base copy constructor copied o's trace sinks: o's out, ours in
        m_txTrace.DisconnectWithoutContext(MakeCallback(&XSocket::OnTx, const_cast<XSocket*>(&o)));
        m_txTrace.ConnectWithoutContext(MakeCallback(&XSocket::OnTx, this));
    }
    Ptr<TcpSocketBase> Fork() override { return CopyObject<XSocket>(this); }

    void OnTx(Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase>) {
        if (!g_rttEveryAck) return;
        TsTag t;
        Packet* q = const_cast<Packet*>(PeekPointer(p));
        q->RemovePacketTag(t);
        t.val = std::max<int64_t>(Simulator::Now().GetTimeStep(), 1);
        t.ecr = m_tsRecent;
        q->AddPacketTag(t);
        if (h.GetFlags() & TcpHeader::ACK) {
            m_lastAckSent = h.GetAckNumber();
            m_ackSent = true;
        }
    }
    void DoForwardUp(Ptr<Packet> packet, const Address& from, const Address& to) override {
        if (g_rttEveryAck) {
            TsTag t;
            m_rxEcr = 0;
            if (packet->PeekPacketTag(t)) {
                m_rxEcr = t.ecr;
                TcpHeader h;
                packet->PeekHeader(h);
                bool carries = (h.GetFlags() & TcpHeader::SYN) || packet->GetSize() > h.GetSerializedSize();
                if (carries && (!m_ackSent || h.GetSequenceNumber() <= m_lastAckSent)) m_tsRecent = t.val;
            }
        }
        TcpSocketBase::DoForwardUp(packet, from, to);
    }
    void EstimateRtt(const TcpHeader& h) override {
        if (!g_rttEveryAck || (h.GetFlags() & TcpHeader::SYN)) {
            TcpSocketBase::EstimateRtt(h);
            return;
        }
        m_history.clear();  // ns-3's own segment timing is not used
        bool fresh = h.GetAckNumber() > m_txBuffer->HeadSequence() || m_state == SYN_RCVD;
        if (fresh && m_rxEcr > 0) {
            Time rtt = Simulator::Now() - TimeStep(m_rxEcr);
            g_rtt_samples++;
            m_rtt->Measurement(rtt);  // what EstimateRtt does with a sample (tcp-socket-base.cc:3798-3806)
            m_rto = Max(m_rtt->GetEstimate() + Max(m_clockGranularity, m_rtt->GetVariation() * 4), m_minRto);
            m_tcb->m_srtt = m_rtt->GetEstimate();
            m_tcb->m_minRtt = std::min(m_tcb->m_srtt.Get(), m_tcb->m_minRtt);
            m_tcb->m_lastRtt = rtt;
        }
    }
    void ProcessAck(const SequenceNumber32& ack, bool scoreboardUpdated, uint32_t delivered,
                    const SequenceNumber32& oldHead, bool receivedData) override {
        if (Ptr<CountingNewReno> cc = DynamicCast<CountingNewReno>(m_congestionControl))
            cc->m_ackBytes = ack > oldHead ? static_cast<uint32_t>(ack - oldHead) : 0;
        TcpSocketBase::ProcessAck(ack, scoreboardUpdated, delivered, oldHead, receivedData);
    }
};

// What TcpL4Protocol::CreateSocket does (tcp-l4-protocol.cc:185-208), with our socket class.
Ptr<Socket> MakeSocket(Ptr<Node> node) {
    Ptr<TcpL4Protocol> tcp = node->GetObject<TcpL4Protocol>();
    TypeIdValue rtt_t, cc_t, rec_t;
    tcp->GetAttribute("RttEstimatorType", rtt_t);
    tcp->GetAttribute("SocketType", cc_t);
    tcp->GetAttribute("RecoveryType", rec_t);
    ObjectFactory f;
    f.SetTypeId(rtt_t.Get());
    Ptr<RttEstimator> rtt = f.Create<RttEstimator>();
    f.SetTypeId(cc_t.Get());
    Ptr<TcpCongestionOps> cc = f.Create<TcpCongestionOps>();
    f.SetTypeId(rec_t.Get());
    Ptr<TcpRecoveryOps> rec = f.Create<TcpRecoveryOps>();
    Ptr<XSocket> s = CreateObject<XSocket>();
    s->SetNode(node);
    s->SetTcp(tcp);
    s->SetRtt(rtt);
    s->SetCongestionControlAlgorithm(cc);
    s->SetRecoveryAlgorithm(rec);
    tcp->AddSocket(s);
    return s;
}

void SwitchDrop(Ptr<const Packet>) { g_switch_drops++; }
void HostDrop(Ptr<const Packet>) { g_host_drops++; }

struct Result {
    double goodput_mbps = 0;
    uint32_t rounds_done = 0;
    double round_ms_max = 0;
    std::vector<double> round_ms;
    double first_start_s = 0;
    double last_end_s = 0;
    std::string error;
};

// The barrier-synchronised incast: persistent connections, one request and
// one SRU per server per round.
class Incast {
  public:
    uint32_t n, rounds, sru, req;
    std::vector<Ptr<Socket>> cli;
    std::map<Socket*, uint32_t> cli_index;
    std::map<uint32_t, uint32_t> server_of_node;  // node id -> server index
    std::vector<uint64_t> resp_got, req_got;
    uint32_t connected = 0, done = 0, round = 0;
    Time round_start, first_start, last_end;
    bool started = false, finished = false;
    double round_ms_max = 0;
    std::vector<double> round_ms;
    std::string error;

    void Connected(Ptr<Socket> s) {
        if (++connected == n) BeginRound();
    }
    void ConnectFailed(Ptr<Socket> s) { Fail("a connection failed"); }
    void Fail(const std::string& why) {
        if (error.empty()) error = why;
        Simulator::Stop();
    }
    void BeginRound() {
        round_start = Simulator::Now();
        if (!started) {
            first_start = round_start;
            started = true;
        }
        done = 0;
        std::fill(resp_got.begin(), resp_got.end(), 0);
        for (uint32_t i = 0; i < n; i++) {
            if (cli[i]->Send(Create<Packet>(req)) != (int)req) Fail("request did not fit the send buffer");
        }
    }
    void ClientRecv(Ptr<Socket> s) {
        uint32_t i = cli_index[PeekPointer(s)];
        Ptr<Packet> p;
        uint64_t before = resp_got[i];
        while ((p = s->Recv())) resp_got[i] += p->GetSize();
        if (before < sru && resp_got[i] >= sru) {
            if (resp_got[i] > sru) Fail("more response bytes than one SRU in a round");
            if (++done == n) EndRound();
        }
    }
    void EndRound() {
        Time now = Simulator::Now();
        round_ms.push_back((now - round_start).GetSeconds() * 1e3);
        round_ms_max = std::max(round_ms_max, round_ms.back());
        last_end = now;
        if (++round >= rounds) {
            finished = true;
            Simulator::Stop();
            return;
        }
        BeginRound();
    }
    void Accept(Ptr<Socket> s, const Address&) {
        s->SetRecvCallback(MakeCallback(&Incast::ServerRecv, this));
    }
    void ServerRecv(Ptr<Socket> s) {
        uint32_t j = server_of_node[s->GetNode()->GetId()];
        Ptr<Packet> p;
        while ((p = s->Recv())) req_got[j] += p->GetSize();
        while (req_got[j] >= req) {
            req_got[j] -= req;
            if (s->Send(Create<Packet>(sru)) != (int)sru) Fail("SRU did not fit the send buffer");
        }
    }
};

void SetQueue(Ptr<NetDevice> d, uint64_t bytes, bool is_switch) {
    Ptr<PointToPointNetDevice> p = DynamicCast<PointToPointNetDevice>(d);
    Ptr<Queue<Packet>> q = p->GetQueue();
    q->SetMaxSize(QueueSize(QueueSizeUnit::BYTES, bytes));
    q->TraceConnectWithoutContext("Drop", MakeCallback(is_switch ? &SwitchDrop : &HostDrop));
}

Result Run(uint32_t n, uint32_t rounds, uint32_t sru, uint32_t req, uint64_t rate_bps, int64_t delay_ps,
           int64_t gap_ps, uint64_t switch_q, uint64_t host_q, uint32_t mtu, double stop_s) {
    g_timeouts = g_fast_recoveries = g_switch_drops = g_host_drops = g_rtt_samples = g_ssthresh_changes = 0;
    NodeContainer switches, servers, client;
    switches.Create(2);
    servers.Create(n);
    client.Create(1);
    InternetStackHelper stack;
    stack.Install(switches);
    stack.Install(servers);
    stack.Install(client);

    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", DataRateValue(DataRate(rate_bps)));
    p2p.SetDeviceAttribute("InterframeGap", TimeValue(PicoSeconds(gap_ps)));
    p2p.SetDeviceAttribute("Mtu", UintegerValue(mtu));
    p2p.SetChannelAttribute("Delay", TimeValue(PicoSeconds(delay_ps)));
    p2p.SetQueue("ns3::DropTailQueue<Packet>");

    Ipv4AddressHelper addr;
    TrafficControlHelper tch;
    std::vector<Ipv4Address> server_addr(n);
    Ipv4Address client_addr;
    uint32_t subnet = 0;
    auto link = [&](Ptr<Node> host, Ptr<Node> sw, bool host_is_switch) {
        NetDeviceContainer d = p2p.Install(host, sw);
        SetQueue(d.Get(0), host_is_switch ? switch_q : host_q, host_is_switch);
        SetQueue(d.Get(1), switch_q, true);
        std::ostringstream base;
        base << "10." << (subnet >> 8) << "." << (subnet & 255) << ".0";
        subnet++;
        addr.SetBase(base.str().c_str(), "255.255.255.0");
        Ipv4InterfaceContainer ifs = addr.Assign(d);
        tch.Uninstall(d);  // the device queue is the only buffer
        return ifs.GetAddress(0);
    };
    link(switches.Get(0), switches.Get(1), true);  // sa - sb
    for (uint32_t i = 0; i < n; i++) server_addr[i] = link(servers.Get(i), switches.Get(0), false);
    client_addr = link(client.Get(0), switches.Get(1), false);
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();
    for (uint32_t i = 0; i < switches.GetN(); i++)
        switches.Get(i)->GetObject<TrafficControlLayer>()->TraceConnectWithoutContext(
            "TcDrop", MakeCallback(&SwitchDrop));
    for (NodeContainer* c : {&servers, &client})
        for (uint32_t i = 0; i < c->GetN(); i++)
            c->Get(i)->GetObject<TrafficControlLayer>()->TraceConnectWithoutContext(
                "TcDrop", MakeCallback(&HostDrop));

    Incast app;
    app.n = n;
    app.rounds = rounds;
    app.sru = sru;
    app.req = req;
    app.resp_got.assign(n, 0);
    app.req_got.assign(n, 0);
    const uint16_t port = 5000;
    for (uint32_t i = 0; i < n; i++) {
        app.server_of_node[servers.Get(i)->GetId()] = i;
        Ptr<Socket> l = MakeSocket(servers.Get(i));
        l->Bind(InetSocketAddress(Ipv4Address::GetAny(), port));
        l->Listen();
        l->SetAcceptCallback(MakeNullCallback<bool, Ptr<Socket>, const Address&>(),
                             MakeCallback(&Incast::Accept, &app));
    }
    for (uint32_t i = 0; i < n; i++) {
        Ptr<Socket> c = MakeSocket(client.Get(0));
        c->Bind();
        c->SetConnectCallback(MakeCallback(&Incast::Connected, &app),
                              MakeCallback(&Incast::ConnectFailed, &app));
        c->SetRecvCallback(MakeCallback(&Incast::ClientRecv, &app));
        app.cli.push_back(c);
        app.cli_index[PeekPointer(c)] = i;
        c->Connect(InetSocketAddress(server_addr[i], port));
    }
    {  // check that the sockets run our NewReno and classic recovery
        PointerValue cc, rec;
        app.cli[0]->GetAttribute("CongestionOps", cc);
        app.cli[0]->GetAttribute("RecoveryOps", rec);
        std::string got = cc.Get<TcpCongestionOps>()->GetName() + "/" + rec.Get<TcpRecoveryOps>()->GetName();
        if (got != "CountingNewReno/TcpClassicRecovery") app.error = "sockets run " + got;
        if (!DynamicCast<XSocket>(app.cli[0])) app.error = "the client socket is no XSocket";
    }
    if (!app.error.empty()) {
        Result r;
        r.error = app.error;
        Simulator::Destroy();
        return r;
    }
    Simulator::Stop(Seconds(stop_s));
    Simulator::Run();
    Result r;
    r.rounds_done = app.round;
    r.round_ms_max = app.round_ms_max;
    r.round_ms = app.round_ms;
    r.error = app.error;
    if (app.error.empty() && !app.finished) r.error = "the run stopped before the last round";
    if (app.round > 0) {
        double secs = (app.last_end - app.first_start).GetSeconds();
        r.goodput_mbps = app.round * (double)n * sru * 8.0 / secs / 1e6;
        r.first_start_s = app.first_start.GetSeconds();
        r.last_end_s = app.last_end.GetSeconds();
    }
    Simulator::Destroy();
    return r;
}

}  // namespace xcodiff
"""


def load_ns3():
    """Import ns-3 and compile the C++ part (about 12 s)."""
    # cppyy prints harmless "Failed to materialize symbols" lines for ns-3's static initialisers
    import cppyy
    from ns import ns  # noqa: F401

    cppyy.cppdef(CPP)
    return cppyy.gbl


def apply_attributes(g, cfg: dict) -> None:
    """Set every ns-3 default of ``cfg`` (our counting NewReno by TypeId)."""
    ns3 = g.ns3
    for name, value in cfg["attributes"]:
        if name == "ns3::TcpL4Protocol::SocketType":
            assert value == "xcodiff::CountingNewReno", value
            ns3.Config.SetDefault(name, ns3.TypeIdValue(g.xcodiff.CountingNewReno.GetTypeId()))
        elif not ns3.Config.SetDefaultFailSafe(name, ns3.StringValue(value)):
            raise RuntimeError(f"ns-3 refused attribute {name} = {value}")


def set_variants(g, variants: list[str]) -> None:
    """Turn the C++ switches of ``variants`` on and every other off (``limited-transmit`` is an
    attribute, set by ``ns3_config``)."""
    unknown = [v for v in variants if v not in NS3_VARIANTS]
    if unknown:
        raise RuntimeError(f"unknown ns-3 variant {unknown[0]!r}")
    x = g.xcodiff
    x.g_lossExitBytes = "loss-exit-bytes" in variants
    x.g_caBytes = "ca-bytes" in variants
    x.g_rtoSsthresh = "rto-ssthresh" in variants
    x.g_rttEveryAck = "rtt-every-ack" in variants


def run_point(g, cfg: dict, n: int, rounds: int, stop_s: float) -> dict:
    """One incast point; returns its figures."""
    t0 = time.perf_counter()
    r = g.xcodiff.Run(
        n,
        rounds,
        cfg["sru_bytes"],
        cfg["request_bytes"],
        cfg["rate_bps"],
        cfg["delay_ps"],
        cfg["interframe_gap_ps"],
        cfg["switch_queue_bytes"],
        cfg["host_queue_bytes"],
        cfg["mtu_bytes"],
        stop_s,
    )
    wall = time.perf_counter() - t0
    if str(r.error):
        raise RuntimeError(f"N={n}: {r.error}")
    x = g.xcodiff
    return {
        "n": n,
        "goodput_mbps": r.goodput_mbps,
        "timeouts": int(x.g_timeouts),
        "fast_recoveries": int(x.g_fast_recoveries),
        "drops": int(x.g_switch_drops + x.g_host_drops),
        "switch_drops": int(x.g_switch_drops),
        "rtt_samples": int(x.g_rtt_samples),
        "ssthresh_changes": int(x.g_ssthresh_changes),
        "rounds_done": int(r.rounds_done),
        "round_ms_max": r.round_ms_max,
        "round_ms": [round(v, 3) for v in r.round_ms],
        "wall_s": wall,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="workload (a) in ns-3.44 (see the module docstring)")
    p.add_argument("--points", default="2,32", help="comma-separated server counts")
    p.add_argument("--rounds", default="20", help="incast rounds (default 20)")
    p.add_argument("--framing", default="ethernet", help="ethernet (xco's, default) or ppp")
    p.add_argument("--config-json", help="ns3_config() output as JSON (default: from SETTINGS)")
    p.add_argument(
        "--variant",
        action="append",
        default=[],
        metavar="NAME",
        help="an ns-3-only change (repeatable or comma-separated; not with --config-json): "
        + ", ".join(NS3_VARIANTS),
    )
    p.add_argument("--stop-s", default="3600", help="simulated-time limit per point, s (default 3600)")
    try:
        a = p.parse_args(sys.argv[1:] if argv is None else argv)
        points = parse_points(a.points)
        try:
            rounds, stop_s = int(a.rounds), float(a.stop_s)
        except ValueError:
            raise UsageError(
                f"--rounds takes a whole number, --stop-s a number: {a.rounds!r}, {a.stop_s!r}"
            ) from None
        if not 1 <= rounds <= 10_000 or not 0 < stop_s <= 1e6:
            raise UsageError("--rounds must be 1..10000 and --stop-s in (0, 1e6]")
        variants = parse_variants(a.variant, "--variant")
        if a.config_json and variants:
            raise UsageError("--variant goes into --config-json (its 'variants'), not beside it")
        if a.config_json:
            try:
                cfg = json.loads(a.config_json)
            except json.JSONDecodeError as e:
                raise UsageError(f"--config-json is not JSON: {e}") from None
            if not isinstance(cfg, dict):
                raise UsageError("--config-json must be a JSON object (ns3_config() output)")
            parse_variants(cfg.get("variants", []), "--config-json 'variants'")
        else:
            try:
                cfg = ns3_config(SETTINGS, a.framing, variants)
            except ValueError as e:
                raise UsageError(str(e)) from None
    except UsageError as e:
        print(f"ns3_incast.py: error: {e}", file=sys.stderr)
        return 2
    try:
        g = load_ns3()
        apply_attributes(g, cfg)
        set_variants(g, cfg.get("variants", []))
        for n in points:
            print(json.dumps(run_point(g, cfg, n, rounds, stop_s)), flush=True)
    except (RuntimeError, AssertionError) as e:
        print(f"ns3_incast.py: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
