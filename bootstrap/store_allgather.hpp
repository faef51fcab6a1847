// Every rank's value, to every rank, through the store in O(ranks) requests: each rank sets its
// own key, rank 0 reads them all and sets one record of them, every other rank reads that record.
// Reading every rank's key on every rank instead is ranks^2 requests on one server (at 256
// ranks, 65,536 of them at init). Values are opaque; the record is length-prefixed.
#pragma once

#include <string>
#include <vector>

#include "tiercc/deadline.hpp"

namespace tiercc {

class Store;

/// Called by all `size` ranks with the same `tag` (a key prefix used once); returns the values
/// in rank order. Timeout when a rank has not set its value by `deadline`.
std::vector<std::string> allgatherThroughStore(Store& store, int rank, int size, const std::string& tag,
                                               const std::string& mine, Deadline deadline);

}  // namespace tiercc
