#include "bootstrap/store_allgather.hpp"

#include <cstdint>
#include <cstring>

#include "core/errors.hpp"
#include "tiercc/store.hpp"

namespace tiercc {
namespace {

void appendRecord(std::string& out, const std::string& value) {
  const auto len = static_cast<std::uint32_t>(value.size());
  out.append(reinterpret_cast<const char*>(&len), sizeof len);
  out += value;
}

std::vector<std::string> splitRecords(const std::string& all, int size, const std::string& key) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (static_cast<int>(out.size()) < size) {
    std::uint32_t len = 0;
    if (all.size() - at < sizeof len) break;
    std::memcpy(&len, all.data() + at, sizeof len);
    at += sizeof len;
    if (all.size() - at < len) break;
    out.push_back(all.substr(at, len));
    at += len;
  }
  if (static_cast<int>(out.size()) != size || at != all.size())
    fail(ErrorCode::Internal, "store record '", key, "' does not hold ", size, " values (", all.size(), " bytes)");
  return out;
}

// On a timeout, which ranks never set their value: the one fact the user needs.
[[noreturn]] void failMissing(Store& store, int size, const std::string& tag, const Error& e) {
  std::string missing;
  int count = 0;
  for (int r = 0; r < size; ++r)
    if (!store.check({tag + std::to_string(r)}) && count++ < 8)
      missing += (missing.empty() ? "" : ", ") + std::to_string(r);
  if (count == 0) throw e;
  fail(ErrorCode::Timeout, e.what(), " (", count, " of ", size, " ranks never arrived, rank(s) ", missing,
       count > 8 ? ", ..." : "", ")");
}

}  // namespace

std::vector<std::string> allgatherThroughStore(Store& store, int rank, int size, const std::string& tag,
                                               const std::string& mine, Deadline deadline) {
  const std::string allKey = tag + "all";
  store.setString(tag + std::to_string(rank), mine);
  try {
    if (rank != 0) return splitRecords(store.getString(allKey, deadline), size, allKey);
    std::vector<std::string> values(size);
    std::string record;
    for (int r = 0; r < size; ++r) {
      values[r] = r == 0 ? mine : store.getString(tag + std::to_string(r), deadline);
      appendRecord(record, values[r]);
    }
    store.setString(allKey, record);
    return values;
  } catch (const Error& e) {
    if (e.code() != ErrorCode::Timeout) throw;
    failMissing(store, size, tag, e);
  }
}

}  // namespace tiercc
