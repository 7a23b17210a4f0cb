#pragma once
// OpenSSL reports failures on a per-thread error queue. Every caller that
// turns one into a message takes it with this, so that the message names the
// root cause (the queue's earliest entry) and the queue is left empty for the
// next call on the thread.

#include <string>
#include <string_view>

namespace placer::certs {

// The earliest entry of this thread's OpenSSL error queue, as OpenSSL formats
// it ("error:0480006C:PEM routines::no start line"), or `whenEmpty`; the queue
// is cleared either way.
std::string takeOpensslError(std::string_view whenEmpty);

}  // namespace placer::certs
