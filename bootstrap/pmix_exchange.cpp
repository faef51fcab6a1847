#include "bootstrap/pmix_exchange.hpp"

#include <cstdlib>

#include "core/errors.hpp"
#include "core/log.hpp"

#if TIERCC_HAVE_PMIX
#include <pmix.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#endif

namespace tiercc {

bool startedUnderPmix() {
  const char* ns = std::getenv("PMIX_NAMESPACE");
  return ns && *ns;
}

#if TIERCC_HAVE_PMIX

bool pmixBuiltIn() { return true; }

namespace {

void check(pmix_status_t status, const char* call) {
  if (status != PMIX_SUCCESS) fail(ErrorCode::SystemError, "PMIx: ", call, " failed: ", PMIx_Error_string(status));
}

// Integers come as whatever type the server chose for the key.
int integerOf(const pmix_value_t& v, const char* key) {
  switch (v.type) {
    case PMIX_UINT32:
      return static_cast<int>(v.data.uint32);
    case PMIX_UINT16:
      return v.data.uint16;
    case PMIX_INT:
      return v.data.integer;
    case PMIX_UINT:
      return static_cast<int>(v.data.uint);
    case PMIX_PROC_RANK:
      return static_cast<int>(v.data.rank);
    default:
      fail(ErrorCode::SystemError, "PMIx: ", key, " has the unexpected type ", PMIx_Data_type_string(v.type));
  }
}

// Ends the PMIx session whatever happens after Init.
struct Session {
  pmix_proc_t me{};
  Session() { check(PMIx_Init(&me, nullptr, 0), "PMIx_Init"); }
  ~Session() {
    if (const pmix_status_t s = PMIx_Finalize(nullptr, 0); s != PMIX_SUCCESS) {
      TIERCC_LOG(Warn, Init) << "PMIx_Finalize: " << PMIx_Error_string(s);
    }
  }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // `key` of `proc`; -1 when the server does not have it (optional keys).
  int integer(const pmix_proc_t& proc, const char* key, bool required) {
    pmix_value_t* v = nullptr;
    const pmix_status_t s = PMIx_Get(&proc, key, nullptr, 0, &v);
    if (s != PMIX_SUCCESS && !required) return -1;
    check(s, key);
    const int n = integerOf(*v, key);
    PMIX_VALUE_RELEASE(v);
    return n;
  }
};

// Each exchange of a process gets its own key: ranks join communicators in the same order.
std::atomic<int> exchanges{0};

}  // namespace

PmixPlace pmixShareFromRank0(const std::function<std::string()>& rank0Value, std::string& value,
                             std::chrono::milliseconds timeout) {
  Session pmix;
  PmixPlace place;
  place.nspace = pmix.me.nspace;
  place.rank = static_cast<int>(pmix.me.rank);
  pmix_proc_t all;
  PMIX_LOAD_PROCID(&all, pmix.me.nspace, PMIX_RANK_WILDCARD);
  place.size = pmix.integer(all, PMIX_JOB_SIZE, true);
  place.localRank = pmix.integer(pmix.me, PMIX_LOCAL_RANK, false);
  TIERCC_REQUIRE_ARG(place.size >= 1 && place.rank >= 0 && place.rank < place.size, "PMIx says rank ", place.rank,
                     " of ", place.size, " (namespace ", place.nspace, ")");

  const std::string key = "tiercc.bootstrap." + std::to_string(exchanges.fetch_add(1));
  if (place.rank == 0) {
    std::string mine = rank0Value();
    pmix_value_t v;
    PMIX_VALUE_CONSTRUCT(&v);
    v.type = PMIX_BYTE_OBJECT;
    v.data.bo.bytes = mine.data();
    v.data.bo.size = mine.size();
    check(PMIx_Put(PMIX_GLOBAL, key.c_str(), &v), "PMIx_Put");  // copies the bytes
  }
  check(PMIx_Commit(), "PMIx_Commit");
  int seconds = static_cast<int>(std::max<std::int64_t>(1, (timeout.count() + 999) / 1000));
  bool collect = true;
  pmix_info_t info[2];
  PMIX_INFO_LOAD(&info[0], PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
  PMIX_INFO_LOAD(&info[1], PMIX_TIMEOUT, &seconds, PMIX_INT);
  const pmix_status_t fenced = PMIx_Fence(&all, 1, info, 2);
  if (fenced != PMIX_SUCCESS)
    fail(
        fenced == PMIX_ERR_TIMEOUT ? ErrorCode::Timeout : ErrorCode::SystemError, "PMIx: the fence of rank ",
        place.rank, " of ", place.size, " (namespace ", place.nspace, ") failed: ", PMIx_Error_string(fenced),
        fenced == PMIX_ERR_TIMEOUT ? " (every rank of the job must create its communicator from the environment)" : "");
  pmix_proc_t root;
  PMIX_LOAD_PROCID(&root, pmix.me.nspace, 0);
  pmix_value_t* got = nullptr;
  check(PMIx_Get(&root, key.c_str(), &info[1], 1, &got), "PMIx_Get of rank 0's bootstrap value");
  if (got->type != PMIX_BYTE_OBJECT) {
    const char* type = PMIx_Data_type_string(got->type);
    PMIX_VALUE_RELEASE(got);
    fail(ErrorCode::SystemError, "PMIx: rank 0's bootstrap value has the type ", type);
  }
  value.assign(got->data.bo.bytes, got->data.bo.size);
  PMIX_VALUE_RELEASE(got);
  PMIX_INFO_DESTRUCT(&info[0]);
  PMIX_INFO_DESTRUCT(&info[1]);
  return place;
}

#else  // built without libpmix

bool pmixBuiltIn() { return false; }

PmixPlace pmixShareFromRank0(const std::function<std::string()>&, std::string&, std::chrono::milliseconds) {
  fail(ErrorCode::NotSupported,
       "a PMIx launcher started this process, but this tiercc was built without PMIx (apt-get install libpmix-dev, "
       "then rebuild; or set TIERCC_STORE, or use a unique id)");
}

#endif

}  // namespace tiercc
