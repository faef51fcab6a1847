// Joining a communicator: through a store address (rank 0 hosts the store when nobody else
// does), an existing Store object, or a unique id (whose maker hosts the store).
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>

#include "bootstrap/local_address.hpp"
#include "bootstrap/pmix_exchange.hpp"
#include "bootstrap/store.hpp"
#include "bootstrap/unique_id.hpp"
#include "core/errors.hpp"
#include "core/log.hpp"
#include "core/params.hpp"
#include "core/random_bytes.hpp"
#include "runtime/communicator_impl.hpp"
#include "runtime/env.hpp"

namespace tiercc {
namespace {

// Rank 0 hosts the store itself when no launcher does (mpirun, torchrun, explicit init):
// it tries to bind the address; if that fails, someone else may serve it (a test fixture, a
// launcher), and rank 0 connects; `bindError` then says why it could not bind. A one-rank job
// may pass port 0, which asks the kernel for a free port.
constexpr std::chrono::milliseconds kBoundByOtherWait{5000};

bool isLoopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host == "[::1]" || host.rfind("127.", 0) == 0;
}

std::shared_ptr<TcpStoreServer> maybeHostStore(const std::string& host, std::uint16_t port, int rank, int size,
                                               std::string& bindError) {
  if (rank != 0 || std::getenv("TIERCC_LOCAL_LAUNCH")) return nullptr;
  TIERCC_REQUIRE_ARG(port != 0 || size == 1, "store address ", host,
                     ":0: port 0 (any free port) works only for a one-rank job, whose peers need not find it");
  try {
    const std::string secret = params::getString("TIERCC_STORE_SECRET");
    auto server = std::make_shared<TcpStoreServer>(host, port, TcpStoreServer::Limits{}, secret);
    if (secret.empty() && !isLoopback(host)) {
      TIERCC_LOG(Warn, Store) << "rank 0 hosts the store at " << host << ":" << server->port()
                              << " with no secret: anyone who reaches it can read and rewrite the job's bootstrap "
                                 "(give every process the same TIERCC_STORE_SECRET)";
    } else {
      TIERCC_LOG(Info, Store) << "rank 0 hosts the store at " << host << ":" << server->port()
                              << (secret.empty() ? " (loopback, no secret)" : "");
    }
    return server;
  } catch (const Error& e) {
    bindError = e.what();
    TIERCC_LOG(Info, Store) << "not hosting the store at " << host << ":" << port << " (" << e.what()
                            << "); connecting to it";
    return nullptr;
  }
}

// The store an id names listened before the id existed: one that does not answer within this
// (or TIERCC_TIMEOUT, if shorter) is gone or out of reach, and waiting longer would hide it.
constexpr std::chrono::milliseconds kIdStoreConnectWait{30000};

// The store a unique id names: one per process, made by the first UniqueId::create and kept
// until the process exits (the communicators of every id it made beat in it). `pid` tells a
// forked child, which inherits the object but not the thread that serves it, that it hosts
// nothing.
struct ProcessStore {
  std::mutex mutex;
  std::shared_ptr<TcpStoreServer> server;
  std::string host, secret;
  pid_t pid = 0;
};

ProcessStore& processStore() {
  static ProcessStore* store = new ProcessStore;  // never destroyed: ranks may beat in it until exit
  return *store;
}

// The process's store when it is the one `id` names, else null.
std::shared_ptr<TcpStoreServer> hostedHere(const UniqueIdFields& id) {
  ProcessStore& ps = processStore();
  std::lock_guard lock(ps.mutex);
  if (!ps.server || ps.pid != getpid()) return nullptr;
  return ps.server->port() == id.port && ps.host == id.host && ps.secret == id.secret ? ps.server : nullptr;
}

}  // namespace

UniqueId UniqueId::create() {
  ProcessStore& ps = processStore();
  UniqueIdFields fields;
  {
    std::lock_guard lock(ps.mutex);
    if (!ps.server || ps.pid != getpid()) {
      const std::string asked = params::getString("TIERCC_BOOTSTRAP_ADDR");
      const std::string host = asked.empty() ? firstRoutableAddress() : asked;
      unsigned char secret[32];
      randomBytes(secret, sizeof secret, "the unique id's store secret");
      ps.secret = toHex(secret, sizeof secret);
      try {
        ps.server = std::make_shared<TcpStoreServer>(host, 0, TcpStoreServer::Limits{}, ps.secret);
      } catch (const Error& e) {
        fail(e.code(), "UniqueId::create: could not start the bootstrap store on ", host,
             asked.empty() ? " (the first routable address; TIERCC_BOOTSTRAP_ADDR names another)"
                           : " (TIERCC_BOOTSTRAP_ADDR)",
             ": ", e.what());
      }
      ps.host = host;
      ps.pid = getpid();
      TIERCC_LOG(Info, Store) << "this process hosts the unique ids' store at " << host << ":" << ps.server->port();
    }
    fields.host = ps.host;
    fields.port = ps.server->port();
    fields.secret = ps.secret;
  }
  unsigned char nonce[16];
  randomBytes(nonce, sizeof nonce, "the unique id");
  fields.nonce = toHex(nonce, sizeof nonce);
  UniqueId id;
  id.bytes = encodeUniqueId(fields);
  return id;
}

// Each communicator created on a store gets its own namespace: the n-th one a rank creates is
// "tiercc/<n>/" (ranks create their communicators in the same order, as with MPI).
static std::string rootPrefix(Store& store, int rank) {
  return "tiercc/" + std::to_string(store.add("tiercc/generation/" + std::to_string(rank), 1)) + "/";
}

Communicator::Communicator(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

std::shared_ptr<Store> makeInProcessStore() { return makeInProcessStoreImpl(); }

// Under a PMIx launcher with no store named: rank 0 makes a unique id (hosting the store), and
// PMIx carries it to every rank, which tells each its rank and the job's size as well.
static Communicator fromPmix(const LaunchEnv& env) {
  std::string idBytes;
  const PmixPlace place = pmixShareFromRank0(
      [] {
        const UniqueId id = UniqueId::create();
        return std::string(reinterpret_cast<const char*>(id.bytes.data()), id.bytes.size());
      },
      idBytes, params::getDuration("TIERCC_TIMEOUT"));
  if (env.rank >= 0 && (env.rank != place.rank || env.worldSize != place.size))
    fail(ErrorCode::InvalidArgument, env.source, " say rank ", env.rank, " of ", env.worldSize, ", PMIx says rank ",
         place.rank, " of ", place.size, " (namespace ", place.nspace, ")");
  TIERCC_REQUIRE_ARG(idBytes.size() == UniqueId::kBytes, "PMIx carried ", idBytes.size(),
                     " bytes from rank 0, not a unique id of ", UniqueId::kBytes);
  UniqueId id;
  std::copy(idBytes.begin(), idBytes.end(), reinterpret_cast<char*>(id.bytes.data()));
  TIERCC_LOG(Info, Init) << "joined through PMIx: rank " << place.rank << " of " << place.size << " (namespace "
                         << place.nspace << ", local rank " << place.localRank << ")";
  return Communicator(id, place.size, place.rank);
}

// The variables first (TIERCC_*, then the launchers'); PMIx when they name no store.
Communicator Communicator::fromEnv() {
  const LaunchEnv env = readLaunchEnv(false);
  if (env.rank >= 0 && !env.storeAddr.empty()) return Communicator(env.storeAddr, env.worldSize, env.rank);
  if (startedUnderPmix()) return fromPmix(env);
  readLaunchEnv(true);  // throws, saying what is missing
  fail(ErrorCode::Internal, "readLaunchEnv accepted an incomplete environment");
}

Communicator::Communicator(const std::string& storeAddr, int worldSize, int rank) {
  TIERCC_REQUIRE_ARG(worldSize >= 1, "world size must be at least 1, got ", worldSize);
  TIERCC_REQUIRE_ARG(rank >= 0 && rank < worldSize, "rank ", rank, " is not in [0, ", worldSize, ")");
  std::string host;
  std::uint16_t port = 0;
  parseHostPort(storeAddr, host, port, worldSize == 1);  // a one-rank job may ask for any free port
  CommSetup setup;
  std::string bindError;
  setup.hostedServer = maybeHostStore(host, port, rank, worldSize, bindError);
  if (setup.hostedServer) port = setup.hostedServer->port();  // the one the kernel chose for port 0
  setup.storeAddr = host + ":" + std::to_string(port);
  setup.storeSecret = params::getString("TIERCC_STORE_SECRET");
  // A store that kept rank 0 from binding is listening already: if none answers within
  // seconds, the port belongs to something else, and waiting the whole timeout would only hide it.
  const auto timeout = bindError.empty() ? params::getDuration("TIERCC_TIMEOUT")
                                         : std::min(params::getDuration("TIERCC_TIMEOUT"), kBoundByOtherWait);
  try {
    setup.baseStore =
        connectTcpStore(host, port, Deadline::after(timeout), std::chrono::milliseconds::max(), setup.storeSecret);
  } catch (const Error& e) {
    if (bindError.empty()) throw;
    fail(e.code(), "rank 0 could not bind the store at ", host, ":", port, " (", bindError,
         ") and no store answered there within ", timeout.count(), " ms: ", e.what());
  }
  setup.prefix = rootPrefix(*setup.baseStore, rank);
  setup.rank = rank;
  setup.size = worldSize;
  impl_ = std::make_unique<Impl>(std::move(setup));
}

Communicator::Communicator(std::shared_ptr<Store> store, int worldSize, int rank) {
  TIERCC_REQUIRE_ARG(store != nullptr, "store is null");
  TIERCC_REQUIRE_ARG(worldSize >= 1, "world size must be at least 1, got ", worldSize);
  TIERCC_REQUIRE_ARG(rank >= 0 && rank < worldSize, "rank ", rank, " is not in [0, ", worldSize, ")");
  CommSetup setup;
  setup.baseStore = std::move(store);
  setup.prefix = rootPrefix(*setup.baseStore, rank);
  setup.rank = rank;
  setup.size = worldSize;
  impl_ = std::make_unique<Impl>(std::move(setup));
}

Communicator::Communicator(const UniqueId& id, int worldSize, int rank) {
  TIERCC_REQUIRE_ARG(worldSize >= 1, "world size must be at least 1, got ", worldSize);
  TIERCC_REQUIRE_ARG(rank >= 0 && rank < worldSize, "rank ", rank, " is not in [0, ", worldSize, ")");
  const UniqueIdFields fields = decodeUniqueId(id.bytes);
  CommSetup setup;
  setup.hostedServer = hostedHere(fields);
  setup.storeAddr = fields.host + ":" + std::to_string(fields.port);
  setup.storeSecret = fields.secret;
  try {
    setup.baseStore = connectTcpStore(
        fields.host, fields.port, Deadline::after(std::min(kIdStoreConnectWait, params::getDuration("TIERCC_TIMEOUT"))),
        std::chrono::milliseconds::max(), setup.storeSecret);
  } catch (const Error& e) {
    fail(e.code(), "the unique id's store at ", setup.storeAddr,
         " does not answer (the process that made the id must still run, and this host must reach it): ", e.what());
  }
  // The id's own namespace, then the n-th communicator this rank makes from it.
  const std::string idPrefix = "id/" + fields.nonce + "/";
  PrefixStore idStore(setup.baseStore, idPrefix);
  setup.prefix = idPrefix + rootPrefix(idStore, rank);
  setup.rank = rank;
  setup.size = worldSize;
  impl_ = std::make_unique<Impl>(std::move(setup));
}

}  // namespace tiercc
