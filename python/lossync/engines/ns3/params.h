// The ns-3 engine program's parameters (dumbbell.cc): the `key value` lines of PARAMS_FILE,
// read and checked. Included by dumbbell.cc only.
//
// PARAMS_FILE holds `key value` lines (written by engines/ns3/__init__.py, `translate`):
//   capacity_bps packet_size mss buffer_pkts queue (droptail|qdisc) duration warmup
//   from_first_congestion record_interval seed sndbuf_bytes rcvbuf_bytes ack_bytes delack_count
//   delack_timeout wall_limit (s; 0: none) progress (wall s between `progress T_S` lines on
//   stderr, T_S the simulated time reached; 0: none)
// with `queue qdisc`, the bottleneck's queue disc: `qdisc_type TYPEID` and `qdisc_attr NAME VALUE`
// lines (attributes as text; `@quantum` calls FqCoDelQueueDisc::SetQuantum), and any number of
// `default PATH VALUE` lines (Config::SetDefault, e.g. the CoDel queue discs fq_codel creates);
// and one line per flow:
//   flow TYPEID RTT_S START_S IW_PKTS SSTHRESH_PKTS(0: unlimited) PACING(0|1) SS_PCT CA_PCT
//        [@access_bps=RATE] [@ecn=On|Off] [Attribute=value ...]   (attributes of the
//        congestion-control TypeId)
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace lossync_ns3
{

struct FlowSpec
{
    std::string type_id;
    double rtt_s = 0;
    double start_s = 0;
    uint32_t iw_pkts = 10;
    double ssthresh_pkts = 0; // 0: unlimited
    bool pacing = false;
    uint32_t pacing_ss_pct = 200, pacing_ca_pct = 120;
    double access_bps = 0; // 0: ACCESS_SPEEDUP times the bottleneck
    std::string ecn = "Off";
    std::vector<std::pair<std::string, std::string>> attrs;
};

struct Params
{
    double capacity_bps = 0;
    uint32_t packet_size = 1500;
    uint32_t mss = 1448;
    uint32_t buffer_pkts = 1;
    std::string queue = "droptail"; // or "qdisc"
    std::string qdisc_type;
    std::vector<std::pair<std::string, std::string>> qdisc_attrs, defaults;
    double duration = 0, warmup = 0, record_interval = 0.1;
    bool from_first_congestion = false;
    uint32_t seed = 1;
    uint64_t sndbuf_bytes = 1 << 20, rcvbuf_bytes = 1 << 20;
    uint32_t ack_bytes = 52;
    uint32_t delack_count = 1;
    double delack_timeout = 0.2;
    double wall_limit = 0;
    double progress = 0; // wall s between `progress T` lines on stderr (0: none)
    std::vector<FlowSpec> flows;
};

[[noreturn]] inline void
Fail(const std::string& msg)
{
    std::fprintf(stderr, "dumbbell: %s\n", msg.c_str());
    std::exit(2);
}

inline Params
ReadParams(const char* path)
{
    std::ifstream in(path);
    if (!in)
    {
        Fail(std::string("cannot read ") + path);
    }
    Params p;
    std::string line;
    while (std::getline(in, line))
    {
        std::istringstream ls(line);
        std::string key;
        if (!(ls >> key) || key[0] == '#')
        {
            continue;
        }
        if (key == "flow")
        {
            FlowSpec f;
            int pacing = 0;
            if (!(ls >> f.type_id >> f.rtt_s >> f.start_s >> f.iw_pkts >> f.ssthresh_pkts >> pacing >>
                  f.pacing_ss_pct >> f.pacing_ca_pct))
            {
                Fail("bad flow line: " + line);
            }
            f.pacing = pacing != 0;
            std::string kv;
            while (ls >> kv)
            {
                auto eq = kv.find('=');
                if (eq == std::string::npos)
                {
                    Fail("bad attribute " + kv);
                }
                if (kv.substr(0, eq) == "@access_bps")
                {
                    f.access_bps = std::atof(kv.c_str() + eq + 1);
                }
                else if (kv.substr(0, eq) == "@ecn")
                {
                    f.ecn = kv.substr(eq + 1);
                }
                else
                {
                    f.attrs.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
                }
            }
            p.flows.push_back(f);
            continue;
        }
        std::string v;
        if (!(ls >> v))
        {
            Fail("no value for " + key);
        }
        if (key == "qdisc_attr" || key == "default")
        {
            std::string w;
            if (!(ls >> w))
            {
                Fail("no value for " + key + " " + v);
            }
            (key == "default" ? p.defaults : p.qdisc_attrs).emplace_back(v, w);
            continue;
        }
        double d = std::atof(v.c_str());
        if (key == "capacity_bps") p.capacity_bps = d;
        else if (key == "packet_size") p.packet_size = uint32_t(d);
        else if (key == "mss") p.mss = uint32_t(d);
        else if (key == "buffer_pkts") p.buffer_pkts = uint32_t(d);
        else if (key == "queue") p.queue = v;
        else if (key == "qdisc_type") p.qdisc_type = v;
        else if (key == "duration") p.duration = d;
        else if (key == "warmup") p.warmup = d;
        else if (key == "from_first_congestion") p.from_first_congestion = d != 0;
        else if (key == "record_interval") p.record_interval = d;
        else if (key == "seed") p.seed = uint32_t(d);
        else if (key == "sndbuf_bytes") p.sndbuf_bytes = uint64_t(d);
        else if (key == "rcvbuf_bytes") p.rcvbuf_bytes = uint64_t(d);
        else if (key == "ack_bytes") p.ack_bytes = uint32_t(d);
        else if (key == "delack_count") p.delack_count = uint32_t(d);
        else if (key == "delack_timeout") p.delack_timeout = d;
        else if (key == "wall_limit") p.wall_limit = d;
        else if (key == "progress") p.progress = d;
        else Fail("unknown key " + key);
    }
    if (p.capacity_bps <= 0 || p.duration <= 0 || p.flows.empty() || p.record_interval <= 0)
    {
        Fail("capacity_bps, duration, record_interval and at least one flow are required");
    }
    if (p.buffer_pkts < 2 || (p.queue == "qdisc" && p.buffer_pkts < 3))
    {
        Fail("buffer too small");
    }
    if ((p.queue == "qdisc") != !p.qdisc_type.empty() || (p.queue != "qdisc" && p.queue != "droptail"))
    {
        Fail("queue is droptail, or qdisc with a qdisc_type");
    }
    return p;
}

} // namespace lossync_ns3
