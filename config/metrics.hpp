#pragma once
// In-process Prometheus metrics: counters, gauges and fixed-bucket
// histograms in a process-wide registry, rendered in the text exposition
// format 0.0.4. Lock-light: the registry's mutex is taken only to find or
// create a series; a series is then updated with atomics, so hot paths keep
// the reference a lookup returned (series are never removed).
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace mg::metrics {

/// Label name → value, ordered (a series' identity).
using labels = std::vector<std::pair<std::string, std::string>>;

enum class kind { counter, gauge, histogram };

const char* to_string(kind k);

/// Adds to a double held in an atomic (no fetch_add for double in C++17).
void atomic_add(std::atomic<double>& a, double v);

class counter {
public:
  void inc(double v = 1) { atomic_add(value_, v); }
  double value() const { return value_.load(std::memory_order_relaxed); }

private:
  std::atomic<double> value_{0};
};

class gauge {
public:
  void set(double v) { value_.store(v, std::memory_order_relaxed); }
  void add(double v) { atomic_add(value_, v); }
  double value() const { return value_.load(std::memory_order_relaxed); }

private:
  std::atomic<double> value_{0};
};

class histogram {
public:
  /// `bounds`: strictly increasing upper bounds (the +Inf bucket is implied).
  explicit histogram(std::vector<double> bounds);
  void observe(double v);

  const std::vector<double>& bounds() const { return bounds_; }
  /// Cumulative counts, one per bound, then the +Inf count.
  std::vector<uint64_t> cumulative() const;
  double sum() const { return sum_.load(std::memory_order_relaxed); }

private:
  std::vector<double> bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> counts_; // per bucket, not cumulative; last = +Inf
  std::atomic<double> sum_{0};
};

/// Default buckets for durations in seconds (1 ms … 60 s).
const std::vector<double>& duration_buckets();

/// One sample line: `name{labels} value` (name may carry a _bucket/_sum/_count suffix).
struct sample {
  std::string suffix; // "", "_bucket", "_sum", "_count"
  labels label_set;
  double value = 0;
};

/// A family as rendered: one HELP, one TYPE, its samples.
struct family {
  std::string name;
  std::string help;
  kind type = kind::gauge;
  std::vector<sample> samples;
};

/// A family's samples for one histogram series (buckets with `le`, sum, count).
void append_histogram(family& f, const labels& l, const histogram& h);

/// Text exposition format 0.0.4 of `families` (each name once, in order).
std::string render(const std::vector<family>& families);

/// A sample value as Prometheus writes it (+Inf, -Inf, NaN, shortest decimal).
std::string format_value(double v);
/// A label value with \\, \" and \n escaped.
std::string escape_label_value(const std::string& v);

class registry {
public:
  /// The process-wide registry.
  static registry& global();

  /// Finds or creates the series; the first call for a name fixes its help
  /// and type (a later call with another type throws std::logic_error).
  counter& get_counter(const std::string& name, const std::string& help, const labels& l = {});
  gauge& get_gauge(const std::string& name, const std::string& help, const labels& l = {});
  histogram& get_histogram(const std::string& name, const std::string& help,
                           const std::vector<double>& bounds, const labels& l = {});

  /// Every family with its current values.
  std::vector<family> collect() const;

private:
  struct entry {
    std::string help;
    kind type;
    std::map<labels, std::unique_ptr<counter>> counters;
    std::map<labels, std::unique_ptr<gauge>> gauges;
    std::map<labels, std::unique_ptr<histogram>> histograms;
  };
  entry& family_entry(const std::string& name, const std::string& help, kind type);

  mutable std::mutex mutex_;
  std::map<std::string, entry> families_;
};

} // namespace mg::metrics
