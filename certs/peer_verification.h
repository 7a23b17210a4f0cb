#pragma once
// A TLS client's check of the server it talks to: the chain against our own
// CA bundle, the certificate against the name we expect. Used by the
// Kubernetes API client and by a follower's relay to the leader.

#include <openssl/ssl.h>

#include <string>

#include "scoring/result.h"

namespace placer::certs {

// Adds every certificate of a PEM bundle to the context's trust store; fails
// when it holds none.
Outcome addCaBundle(SSL_CTX* context, const std::string& pem);

// The context's connections accept only a certificate for `name`: an IP
// address (matched against the IP SANs) or a DNS name.
Outcome verifyPeerName(SSL_CTX* context, const std::string& name);

}  // namespace placer::certs
