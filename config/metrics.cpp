#include "config/metrics.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace mg::metrics {

const char* to_string(kind k) {
  switch (k) {
  case kind::counter:
    return "counter";
  case kind::gauge:
    return "gauge";
  case kind::histogram:
    return "histogram";
  }
  return "untyped";
}

void atomic_add(std::atomic<double>& a, double v) {
  double cur = a.load(std::memory_order_relaxed);
  while (!a.compare_exchange_weak(cur, cur + v, std::memory_order_relaxed))
    ;
}

histogram::histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), counts_(new std::atomic<uint64_t>[bounds_.size() + 1]) {
  if (!std::is_sorted(bounds_.begin(), bounds_.end()) ||
      std::adjacent_find(bounds_.begin(), bounds_.end()) != bounds_.end())
    throw std::logic_error("histogram bounds must be strictly increasing");
  for (size_t i = 0; i <= bounds_.size(); ++i)
    counts_[i].store(0, std::memory_order_relaxed);
}

void histogram::observe(double v) {
  // First bucket whose upper bound is >= v ("le" is inclusive).
  auto i = std::lower_bound(bounds_.begin(), bounds_.end(), v) - bounds_.begin();
  counts_[i].fetch_add(1, std::memory_order_relaxed);
  atomic_add(sum_, v);
}

std::vector<uint64_t> histogram::cumulative() const {
  std::vector<uint64_t> out;
  uint64_t running = 0;
  for (size_t i = 0; i <= bounds_.size(); ++i) {
    running += counts_[i].load(std::memory_order_relaxed);
    out.push_back(running);
  }
  return out;
}

const std::vector<double>& duration_buckets() {
  static const std::vector<double> b{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                     0.5,   1,      2.5,   5,    10,    30,   60};
  return b;
}

void append_histogram(family& f, const labels& l, const histogram& h) {
  auto counts = h.cumulative();
  for (size_t i = 0; i < counts.size(); ++i) {
    labels with_le = l;
    with_le.emplace_back("le", i < h.bounds().size() ? format_value(h.bounds()[i]) : "+Inf");
    f.samples.push_back({"_bucket", std::move(with_le), static_cast<double>(counts[i])});
  }
  f.samples.push_back({"_sum", l, h.sum()});
  f.samples.push_back({"_count", l, static_cast<double>(counts.back())});
}

std::string format_value(double v) {
  if (std::isnan(v))
    return "NaN";
  if (std::isinf(v))
    return v > 0 ? "+Inf" : "-Inf";
  if (v == std::floor(v) && std::fabs(v) < 1e15)
    return std::to_string(static_cast<long long>(v));
  // The shortest representation that reads back as the same double.
  char buf[32];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v)
      break;
  }
  return buf;
}

std::string escape_label_value(const std::string& v) {
  std::string out;
  out.reserve(v.size());
  for (char ch : v) {
    if (ch == '\\')
      out += "\\\\";
    else if (ch == '"')
      out += "\\\"";
    else if (ch == '\n')
      out += "\\n";
    else
      out += ch;
  }
  return out;
}

namespace {

/// HELP text escapes only backslash and newline (format 0.0.4).
std::string escape_help(const std::string& v) {
  std::string out;
  for (char ch : v) {
    if (ch == '\\')
      out += "\\\\";
    else if (ch == '\n')
      out += "\\n";
    else
      out += ch;
  }
  return out;
}

void render_sample(std::string& out, const std::string& name, const sample& s) {
  out += name;
  out += s.suffix;
  if (!s.label_set.empty()) {
    out += '{';
    bool first = true;
    for (auto& [k, v] : s.label_set) {
      if (!first)
        out += ',';
      first = false;
      out += k;
      out += "=\"";
      out += escape_label_value(v);
      out += '"';
    }
    out += '}';
  }
  out += ' ';
  out += format_value(s.value);
  out += '\n';
}

} // namespace

std::string render(const std::vector<family>& families) {
  std::string out;
  for (auto& f : families) {
    out += "# HELP " + f.name + " " + escape_help(f.help) + "\n";
    out += "# TYPE " + f.name + " " + to_string(f.type) + "\n";
    for (auto& s : f.samples)
      render_sample(out, f.name, s);
  }
  return out;
}

registry& registry::global() {
  static registry r;
  return r;
}

registry::entry& registry::family_entry(const std::string& name, const std::string& help,
                                        kind type) {
  auto [it, fresh] = families_.try_emplace(name);
  if (fresh) {
    it->second.help = help;
    it->second.type = type;
  } else if (it->second.type != type) {
    throw std::logic_error("metric " + name + " registered with two types");
  }
  return it->second;
}

counter& registry::get_counter(const std::string& name, const std::string& help, const labels& l) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto& slot = family_entry(name, help, kind::counter).counters[l];
  if (!slot)
    slot = std::make_unique<counter>();
  return *slot;
}

gauge& registry::get_gauge(const std::string& name, const std::string& help, const labels& l) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto& slot = family_entry(name, help, kind::gauge).gauges[l];
  if (!slot)
    slot = std::make_unique<gauge>();
  return *slot;
}

histogram& registry::get_histogram(const std::string& name, const std::string& help,
                                   const std::vector<double>& bounds, const labels& l) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto& slot = family_entry(name, help, kind::histogram).histograms[l];
  if (!slot)
    slot = std::make_unique<histogram>(bounds);
  return *slot;
}

std::vector<family> registry::collect() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<family> out;
  for (auto& [name, e] : families_) {
    family f{name, e.help, e.type, {}};
    for (auto& [l, c] : e.counters)
      f.samples.push_back({"", l, c->value()});
    for (auto& [l, g] : e.gauges)
      f.samples.push_back({"", l, g->value()});
    for (auto& [l, h] : e.histograms)
      append_histogram(f, l, *h);
    out.push_back(std::move(f));
  }
  return out;
}

} // namespace mg::metrics
