#include "certs/in_cluster.h"

#include <gtest/gtest.h>

#include <functional>

namespace placer::certs {
namespace {

using std::chrono::hours;
using WriteResult = CertificateApi::WriteResult;

// An in-memory API server for one Secret and one webhook configuration, with
// resourceVersions and a log of the writes in order.
class FakeCertificateApi : public CertificateApi {
 public:
  std::optional<StoredSecret> secret;
  std::optional<WebhookConfigurationState> config;
  std::vector<std::string> writes;  // "secret", "webhook"
  std::function<void()> beforeSecretWrite;  // a concurrent writer, run once
  std::optional<std::string> failWith;       // every call fails
  int version = 1;

  Result<std::optional<StoredSecret>> getSecret(const std::string& ns, const std::string& name) override {
    if (failWith) return Error{*failWith};
    return secret;
  }
  Result<WriteResult> createSecret(const std::string& ns, const std::string& name, const SecretData& data) override {
    if (failWith) return Error{*failWith};
    runConcurrentWriter();
    if (secret) return WriteResult::Conflict;
    secret = StoredSecret{data, std::to_string(++version)};
    writes.push_back("secret");
    return WriteResult::Done;
  }
  Result<WriteResult> updateSecret(const std::string& ns, const std::string& name, const SecretData& data,
                                   const std::string& resourceVersion) override {
    if (failWith) return Error{*failWith};
    runConcurrentWriter();
    if (!secret || secret->resourceVersion != resourceVersion) return WriteResult::Conflict;
    secret = StoredSecret{data, std::to_string(++version)};
    writes.push_back("secret");
    return WriteResult::Done;
  }
  Result<std::optional<WebhookConfigurationState>> getWebhookConfiguration(const std::string& name) override {
    if (failWith) return Error{*failWith};
    return config;
  }
  Result<WriteResult> patchCaBundles(const std::string& name,
                                     const std::vector<std::pair<size_t, std::string>>& indexedNames,
                                     const std::string& caBundlePem) override {
    if (failWith) return Error{*failWith};
    for (const auto& [index, webhook] : indexedNames) {
      if (index >= config->webhooks.size() || config->webhooks[index].webhookName != webhook) {
        return WriteResult::Conflict;
      }
      config->webhooks[index].caBundlePem = caBundlePem;
    }
    config->resourceVersion = std::to_string(++version);
    writes.push_back("webhook");
    return WriteResult::Done;
  }

 private:
  void runConcurrentWriter() {
    if (!beforeSecretWrite) return;
    auto writer = std::move(beforeSecretWrite);
    beforeSecretWrite = nullptr;
    writer();
  }
};

EnsureOptions options() {
  EnsureOptions o;
  o.spec.service = "placer";
  o.spec.ns = "placer-system";
  return o;
}

FakeCertificateApi installedCluster() {
  FakeCertificateApi api;
  api.config = WebhookConfigurationState{{{"pods.placer.io", ""}}, "1"};
  return api;
}

const std::string kHost = "placer.placer-system.svc";

std::string servedLeaf(const FakeCertificateApi& api) { return api.secret->data.at("tls.crt"); }
std::string webhookBundle(const FakeCertificateApi& api) { return api.config->webhooks[0].caBundlePem; }

TEST(EnsureInCluster, FirstRunCreatesTheSecretAndInjectsTheCaBundle) {
  FakeCertificateApi api = installedCluster();
  auto r = ensureInCluster(api, options(), Clock::now());
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->action, RenewalAction::Created);
  EXPECT_TRUE(r->secretWritten);
  EXPECT_EQ(r->patchedWebhooks, std::vector<std::string>{"pods.placer.io"});
  EXPECT_EQ(api.writes, (std::vector<std::string>{"webhook", "secret"})) << "trust before material";
  ASSERT_TRUE(api.secret);
  for (const char* key : {"ca.crt", "ca.key", "tls.crt", "tls.key"}) EXPECT_TRUE(api.secret->data.count(key)) << key;
  EXPECT_TRUE(verifyServingChain(servedLeaf(api), webhookBundle(api), kHost));
}

TEST(EnsureInCluster, SecondRunChangesNothing) {
  FakeCertificateApi api = installedCluster();
  ASSERT_TRUE(ensureInCluster(api, options(), Clock::now()).ok());
  api.writes.clear();
  auto r = ensureInCluster(api, options(), Clock::now());
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->action, RenewalAction::Kept);
  EXPECT_FALSE(r->secretWritten);
  EXPECT_TRUE(r->patchedWebhooks.empty());
  EXPECT_TRUE(api.writes.empty());
}

TEST(EnsureInCluster, OverwrittenCaBundleIsRestored) {
  struct Case {
    const char* name;
    std::string overwrite;
  };
  auto stranger = generateCa("someone-else", 30, KeyType::EcdsaP256);
  ASSERT_TRUE(stranger.ok());
  const Case cases[] = {{"Emptied", ""}, {"Garbage", "not a certificate"}, {"OtherCa", stranger->certificatePem}};
  for (const Case& c : cases) {
    FakeCertificateApi api = installedCluster();
    api.config->webhooks.push_back({"second.placer.io", ""});
    ASSERT_TRUE(ensureInCluster(api, options(), Clock::now()).ok());
    const std::string good = webhookBundle(api);
    api.config->webhooks[1].caBundlePem = c.overwrite;
    api.writes.clear();
    auto r = ensureInCluster(api, options(), Clock::now());
    ASSERT_TRUE(r.ok()) << c.name << ": " << r.error().message;
    EXPECT_EQ(r->patchedWebhooks, std::vector<std::string>{"second.placer.io"}) << c.name;
    EXPECT_EQ(api.config->webhooks[1].caBundlePem, good) << c.name;
    EXPECT_EQ(api.writes, std::vector<std::string>{"webhook"}) << c.name << ": the Secret is left alone";
  }
}

TEST(EnsureInCluster, CaRotationTrustsTheNewCaBeforeServingALeafItSigned) {
  FakeCertificateApi api = installedCluster();
  EnsureOptions o = options();
  o.spec.days = 30;
  o.spec.caDays = 365;
  ASSERT_TRUE(ensureInCluster(api, o, Clock::now()).ok());
  const std::string oldCa = api.secret->data.at("ca.crt");
  const Clock::time_point caEnd = inspectCertificate(oldCa)->notAfter;
  // Regular leaf renewals until the CA itself is due (fewer than 60 days left).
  ASSERT_EQ(ensureInCluster(api, o, caEnd - hours(24 * 61))->action, RenewalAction::ReissuedLeaf);
  const std::string oldLeaf = servedLeaf(api);
  const Clock::time_point now = caEnd - hours(24 * 59);
  api.writes.clear();

  auto r = ensureInCluster(api, o, now);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->action, RenewalAction::RotatedCa) << r->reason;
  EXPECT_EQ(api.writes, (std::vector<std::string>{"webhook", "secret"})) << "trust before material";
  EXPECT_EQ(splitCertificates(webhookBundle(api))->size(), 2u);
  EXPECT_EQ(servedLeaf(api), oldLeaf) << "the leaf moves on a later pass";
  EXPECT_TRUE(verifyServingChain(oldLeaf, webhookBundle(api), kHost, now));

  api.writes.clear();
  const Clock::time_point later = now + o.spec.trustPropagation + std::chrono::minutes(1);
  r = ensureInCluster(api, o, later);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->action, RenewalAction::ReissuedLeaf) << r->reason;
  EXPECT_EQ(api.writes, std::vector<std::string>{"secret"}) << "the bundle already trusts the new CA";
  EXPECT_NE(servedLeaf(api), oldLeaf);
  EXPECT_TRUE(verifyServingChain(servedLeaf(api), webhookBundle(api), kHost, later));
}

TEST(EnsureInCluster, LosingARaceAdoptsTheWinnersMaterial) {
  FakeCertificateApi api = installedCluster();
  FakeCertificateApi winner = installedCluster();
  ASSERT_TRUE(ensureInCluster(winner, options(), Clock::now()).ok());
  // Another replica creates the Secret (and patches the bundle) between our read and our write.
  api.beforeSecretWrite = [&] {
    api.secret = winner.secret;
    api.config = winner.config;
  };
  auto r = ensureInCluster(api, options(), Clock::now());
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->action, RenewalAction::Kept) << "the second attempt keeps the winner's certificates";
  EXPECT_EQ(servedLeaf(api), servedLeaf(winner));
  EXPECT_TRUE(sameCertificates(webhookBundle(api), winner.secret->data.at("ca.crt")));
  EXPECT_TRUE(verifyServingChain(servedLeaf(api), webhookBundle(api), kHost));
}

TEST(EnsureInCluster, MissingWebhookConfigurationStillStoresTheSecret) {
  FakeCertificateApi api;
  auto r = ensureInCluster(api, options(), Clock::now());
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->webhookConfigurationMissing);
  EXPECT_TRUE(r->secretWritten);
}

TEST(EnsureInCluster, ApiFailureIsAnErrorNamingTheObject) {
  FakeCertificateApi api = installedCluster();
  api.failWith = "connection refused";
  auto r = ensureInCluster(api, options(), Clock::now());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "secrets/placer-system/placer-certs: connection refused");
}

TEST(SecretData, RoundTripsMaterial) {
  auto created = renew(std::nullopt, options().spec, Clock::now());
  ASSERT_TRUE(created.ok());
  auto back = fromSecretData(toSecretData(created->material));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->ca.certificatePem, created->material.ca.certificatePem);
  EXPECT_EQ(back->serving.privateKeyPem, created->material.serving.privateKeyPem);
  EXPECT_FALSE(fromSecretData({}));
}

}  // namespace
}  // namespace placer::certs
