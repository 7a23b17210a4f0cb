#pragma once
// Sends whole HTTP requests on to another server over keep-alive TLS, for the
// routes of a listener that relay (Route::relay): a follower's review, to the
// leader. Internal to the listener (webhook/http_server.cpp).
//
// Everything runs on the listener's I/O thread that received the request: no
// worker is woken to wait for the upstream, and the request and its answer
// cross no other thread of this process. Before, a forwarded review took
// three more thread wake-ups here (I/O thread -> worker, the worker blocked on
// the upstream's answer, worker -> I/O thread); RESULTS.md, "Issue 16:
// forwarding latency (branch fwd)".
//
// Each request goes out as one write (headers and body, one TLS record up to
// 16 KB) and its answer is read with OpenSSL's read-ahead (one read(2) for a
// small answer). Connections are pooled for one upstream address at a time
// (the leader's; a new address drops the old pool): a relay takes an idle one
// or opens a new one, so concurrent relays never wait for each other. A
// pooled connection that the upstream has closed meanwhile is noticed before
// use; one that fails before any byte of its answer arrived is replaced by a
// new connection once, within the same deadline.
//
// Thread-safety: relay() may be called concurrently from any threads; each
// relay runs on a strand of the io_context given. closeIdle() from any thread.

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "scoring/result.h"
#include "webhook/http_server.h"

namespace boost::asio {
class io_context;
}  // namespace boost::asio

namespace placer {

class HttpRelay : public std::enable_shared_from_this<HttpRelay> {
 public:
  // Fails when the CA holds no certificate or the name cannot be verified.
  // An answer body above maxAnswerBytes fails the relay.
  static Result<std::shared_ptr<HttpRelay>> create(RelayOptions options, size_t maxAnswerBytes);
  ~HttpRelay();
  HttpRelay(const HttpRelay&) = delete;
  HttpRelay& operator=(const HttpRelay&) = delete;

  // Called once, on a thread running the io_context: the upstream's body when
  // it answered 200 in time, else why not.
  using Done = std::function<void(Result<std::string> answer)>;

  // Sends `request` (its method, path, Content-Type and body, with the
  // options' headers and a ?timeout= of the relay's own) to https://address,
  // with host:port (a name is resolved when the address changes, blocking).
  // Returns at once; `done` runs on a thread of `io`.
  void relay(boost::asio::io_context& io, const std::string& address,
             std::shared_ptr<const HttpRequest> request, Done done);

  // Closes the idle pooled connections (a listener that stops).
  void closeIdle();

  struct Upstream;  // one connection to the upstream (http_relay.cpp)
  struct Exchange;  // one request and its answer

 private:
  friend struct Exchange;
  HttpRelay(RelayOptions options, size_t maxAnswerBytes);

  struct Pool;  // the idle connections, under a mutex
  const RelayOptions options_;
  const size_t maxAnswerBytes_;
  std::unique_ptr<Pool> pool_;
};

}  // namespace placer
