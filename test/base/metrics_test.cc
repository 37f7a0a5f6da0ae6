#include "base/metrics.h"

#include <gtest/gtest.h>

namespace nbdk {
namespace {

TEST(MetricsTest, CountersRenderWithLabelsSorted) {
  Metrics m;
  m.DeclareCounter("x_total", "Things.");
  m.Increment("x_total", {{"method", "Probe"}, {"code", "OK"}});
  m.Increment("x_total", {{"method", "Probe"}, {"code", "OK"}}, 2);
  EXPECT_EQ(m.CounterValue("x_total", {{"method", "Probe"}, {"code", "OK"}}), 3u);
  EXPECT_EQ(m.Render(),
            "# HELP x_total Things.\n# TYPE x_total counter\n"
            "x_total{method=\"Probe\",code=\"OK\"} 3\n");
}

TEST(MetricsTest, HistogramBucketsAreCumulative) {
  Metrics m;
  m.DeclareHistogram("lat_seconds", "Latency.", {0.1, 1});
  m.Observe("lat_seconds", {}, 0.05);
  m.Observe("lat_seconds", {}, 0.5);
  m.Observe("lat_seconds", {}, 5);
  EXPECT_EQ(m.Render(),
            "# HELP lat_seconds Latency.\n# TYPE lat_seconds histogram\n"
            "lat_seconds_bucket{le=\"0.1\"} 1\n"
            "lat_seconds_bucket{le=\"1\"} 2\n"
            "lat_seconds_bucket{le=\"+Inf\"} 3\n"
            "lat_seconds_sum 5.55\n"
            "lat_seconds_count 3\n");
}

// A component's own series (the supervisor's re-attach times) renders as
// a declared histogram does.
TEST(MetricsTest, AHistogramSeriesKeptElsewhereRendersLikeADeclaredOne) {
  HistogramSeries series({0.1, 1});
  for (double v : {0.05, 0.5, 5.0}) series.Observe(v);
  MetricsWriter w;
  w.Histogram("lat_seconds", {{"k", "v"}}, series);
  EXPECT_EQ(w.Take(),
            "lat_seconds_bucket{k=\"v\",le=\"0.1\"} 1\n"
            "lat_seconds_bucket{k=\"v\",le=\"1\"} 2\n"
            "lat_seconds_bucket{k=\"v\",le=\"+Inf\"} 3\n"
            "lat_seconds_sum{k=\"v\"} 5.55\n"
            "lat_seconds_count{k=\"v\"} 3\n");
}

TEST(MetricsTest, LabelValuesAreEscaped) {
  EXPECT_EQ(FormatLabels({{"a", "q\"b\\s\nn"}}), "{a=\"q\\\"b\\\\s\\nn\"}");
  EXPECT_EQ(FormatLabels({}), "");
}

TEST(MetricsTest, CollectorsAppendAtRenderTime) {
  Metrics m;
  int value = 1;
  m.AddCollector([&](MetricsWriter& w) {
    w.Family("g", "Gauge.", "gauge");
    w.Sample("g", {}, value);
  });
  value = 42;
  EXPECT_EQ(m.Render(), "# HELP g Gauge.\n# TYPE g gauge\ng 42\n");
}

}  // namespace
}  // namespace nbdk
