// Bandwidth and latency parsing and printing (core/units.hpp), with the bits-vs-bytes traps
// that make a modelled link 8x off: 800 Gbit/s = 100 GB/s, 7.2 Tbit/s = 900 GB/s.
#include <gtest/gtest.h>

#include "core/units.hpp"
#include "tiercc/error.hpp"

namespace tiercc {
namespace {

using units::formatBandwidth;
using units::formatLatency;
using units::parseBandwidth;
using units::parseLatency;
using units::parseMessageSize;

double bw(const std::string& text) { return parseBandwidth(text, "TIERCC_EMU_SCALEOUT_BW"); }

// The message of the InvalidArgument that parsing `text` throws ("" when it does not throw).
std::string bandwidthError(const std::string& text) {
  try {
    bw(text);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument) << text;
    return e.what();
  }
  return "";
}

std::string latencyError(const std::string& text) {
  try {
    parseLatency(text, "TIERCC_EMU_SCALEUP_LATENCY");
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument) << text;
    return e.what();
  }
  return "";
}

TEST(Units, BytesWithDecimalPrefixes) {
  EXPECT_DOUBLE_EQ(bw("900GB/s"), 900e9);
  EXPECT_DOUBLE_EQ(bw("100GB/s"), 100e9);
  EXPECT_DOUBLE_EQ(bw("7.2TB/s"), 7.2e12);
  EXPECT_DOUBLE_EQ(bw("500MB/s"), 500e6);
  EXPECT_DOUBLE_EQ(bw("12.5 GB/s"), 12.5e9);
  EXPECT_DOUBLE_EQ(bw("  64kB/s "), 64e3);
  EXPECT_DOUBLE_EQ(bw("64KB/s"), 64e3);
  EXPECT_DOUBLE_EQ(bw("1B/s"), 1);
}

TEST(Units, BitsInBothSpellings) {
  EXPECT_DOUBLE_EQ(bw("800Gb/s"), 100e9);
  EXPECT_DOUBLE_EQ(bw("800Gbit/s"), 100e9);
  EXPECT_DOUBLE_EQ(bw("4Gbit/s"), 0.5e9);
  EXPECT_DOUBLE_EQ(bw("7.2Tbit/s"), 900e9);
  EXPECT_DOUBLE_EQ(bw("400 Gb/s"), 50e9);
  EXPECT_DOUBLE_EQ(bw("8bit/s"), 1);
}

TEST(Units, BinaryPrefixesAreExplicit) {
  EXPECT_DOUBLE_EQ(bw("1GiB/s"), 1024.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(bw("4MiB/s"), 4.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(bw("1KiB/s"), 1024);
  EXPECT_LT(bw("1GB/s"), bw("1GiB/s"));
}

// The field notes' numbers, through the parser: the traps are the point.
TEST(Units, FieldNotesTraps) {
  EXPECT_DOUBLE_EQ(bw("800 Gbit/s"), bw("100 GB/s"));   // a ConnectX-8 NIC
  EXPECT_DOUBLE_EQ(bw("7.2 Tbit/s"), bw("900 GB/s"));   // one NVLink 5 GPU, each direction
  EXPECT_NEAR(72 * bw("900GB/s"), bw("64.8TB/s"), 1e3);  // an NVL72 rack inside
  EXPECT_NEAR(72 * bw("100GB/s"), bw("7.2TB/s"), 1e3);   // and out
  EXPECT_NEAR(bw("900GB/s") / bw("800Gbit/s"), 9.0, 1e-12);
}

TEST(Units, BareNumberExplainsBitsVsBytes) {
  EXPECT_EQ(bandwidthError("800"),
            "TIERCC_EMU_SCALEOUT_BW='800': a bandwidth needs a unit: 800Gb/s (bits, as NICs are sold: "
            "100 GB/s) or 800GB/s (bytes)");
  std::string withPrefix = bandwidthError("900G");
  EXPECT_NE(withPrefix.find("900Gb/s (bits"), std::string::npos) << withPrefix;
  EXPECT_NE(withPrefix.find("900GB/s (bytes)"), std::string::npos) << withPrefix;
  EXPECT_NE(bandwidthError("12.5").find("12.5GB/s (bytes)"), std::string::npos);
}

TEST(Units, AmbiguousOrIncompleteUnitsAreRejected) {
  std::string ambiguous = bandwidthError("800G/s");
  EXPECT_NE(ambiguous.find("bits or bytes"), std::string::npos) << ambiguous;
  EXPECT_NE(ambiguous.find("800Gb/s"), std::string::npos) << ambiguous;
  std::string notPerSecond = bandwidthError("900GB");
  EXPECT_NE(notPerSecond.find("per second: 900GB/s"), std::string::npos) << notPerSecond;
  for (const char* bad : {"", "GB/s", "fast", "-1GB/s", "0GB/s", "1e9B/s", "1.2.3GB/s", "100 Gbps", "100mb/s",
                          "100XB/s", "inf GB/s", "100GB/h"})
    EXPECT_NE(bandwidthError(bad), "") << "accepted '" << bad << "'";
  EXPECT_NE(bandwidthError("fast").find("TIERCC_EMU_SCALEOUT_BW='fast'"), std::string::npos);
}

// Sizes as tiercc-perf and tiercc-sim take them; what no size_t holds is refused, not
// converted (libFuzzer found "2e53G", whose conversion was undefined behaviour).
TEST(Units, MessageSizesAreBinaryAndBounded) {
  EXPECT_EQ(parseMessageSize("8", "--size"), 8u);
  EXPECT_EQ(parseMessageSize("4K", "--size"), 4096u);
  EXPECT_EQ(parseMessageSize("64MB", "--size"), 64u << 20);
  EXPECT_EQ(parseMessageSize("1G", "--size"), 1u << 30);
  for (const char* bad : {"", "K", "-1", "2e53G", "1e300", "nan", "inf", "infG", "4X", "4 K"}) {
    try {
      parseMessageSize(bad, "--size");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::InvalidArgument) << bad;
      EXPECT_NE(std::string(e.what()).find("--size"), std::string::npos) << e.what();
    }
  }
}

TEST(Units, Latencies) {
  EXPECT_DOUBLE_EQ(parseLatency("2us", "x"), 2e-6);
  EXPECT_DOUBLE_EQ(parseLatency("1.5ms", "x"), 1.5e-3);
  EXPECT_DOUBLE_EQ(parseLatency("500ns", "x"), 500e-9);
  EXPECT_DOUBLE_EQ(parseLatency("3 s", "x"), 3);
  EXPECT_DOUBLE_EQ(parseLatency("2\xC2\xB5s", "x"), 2e-6);
  EXPECT_EQ(parseLatency("0", "x"), 0);
  EXPECT_EQ(parseLatency("0us", "x"), 0);
  std::string bare = latencyError("2");
  EXPECT_NE(bare.find("TIERCC_EMU_SCALEUP_LATENCY='2': a latency needs a unit: 2us"), std::string::npos) << bare;
  for (const char* bad : {"", "us", "-2us", "2 minutes", "2m", "2h"})
    EXPECT_NE(latencyError(bad), "") << "accepted '" << bad << "'";
}

TEST(Units, FormatsBytesThenBits) {
  EXPECT_EQ(formatBandwidth(100e9), "100 GB/s (800 Gbit/s)");
  EXPECT_EQ(formatBandwidth(900e9), "900 GB/s (7.2 Tbit/s)");
  EXPECT_EQ(formatBandwidth(64.8e12), "64.8 TB/s (518.4 Tbit/s)");
  EXPECT_EQ(formatBandwidth(12.5e9), "12.5 GB/s (100 Gbit/s)");
  EXPECT_EQ(formatBandwidth(100e6), "100 MB/s (800 Mbit/s)");
  EXPECT_EQ(formatBandwidth(1), "1 B/s (8 bit/s)");
  EXPECT_EQ(formatLatency(2e-6), "2 us");
  EXPECT_EQ(formatLatency(1.5e-3), "1.5 ms");
  EXPECT_EQ(formatLatency(0), "0 s");
}

TEST(Units, FormatThenParseRoundTrips) {
  for (double v : {1e9, 9e9, 100e9, 900e9, 7.2e12}) {
    std::string text = formatBandwidth(v);
    EXPECT_DOUBLE_EQ(bw(text.substr(0, text.find(" ("))), v) << text;
    std::string bits = text.substr(text.find('(') + 1);
    bits.pop_back();
    EXPECT_DOUBLE_EQ(bw(bits), v) << text;
  }
}

}  // namespace
}  // namespace tiercc
