#include "test/fakeapi/test_webhook.h"

#include <Poco/Net/Context.h>
#include <Poco/Net/HTTPRequestHandler.h>
#include <Poco/Net/HTTPRequestHandlerFactory.h>
#include <Poco/Net/HTTPServer.h>
#include <Poco/Net/HTTPServerParams.h>
#include <Poco/Net/HTTPServerRequest.h>
#include <Poco/Net/HTTPServerResponse.h>
#include <Poco/Net/SSLManager.h>
#include <Poco/Net/SecureServerSocket.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "certs/x509.h"
#include "test/fakeapi/admission.h"

namespace placer::fakeapi {

class TestWebhook::Impl : public Poco::Net::HTTPRequestHandlerFactory {
 public:
  class Handler : public Poco::Net::HTTPRequestHandler {
   public:
    explicit Handler(Impl& owner) : owner_(owner) {}
    void handleRequest(Poco::Net::HTTPServerRequest& req, Poco::Net::HTTPServerResponse& resp) override {
      std::string text(std::istreambuf_iterator<char>(req.stream()), {});
      nlohmann::json review = nlohmann::json::parse(text, nullptr, false);
      {
        std::lock_guard lock(owner_.mu_);
        owner_.calls_.push_back({req.getURI(), review});
      }
      WebhookAnswer a = owner_.answer_(review);
      resp.setStatus(static_cast<Poco::Net::HTTPResponse::HTTPStatus>(a.status));
      resp.setContentType("application/json");
      resp.setContentLength(static_cast<std::streamsize>(a.body.size()));
      resp.send() << a.body;
    }

   private:
    Impl& owner_;
  };

  Poco::Net::HTTPRequestHandler* createRequestHandler(const Poco::Net::HTTPServerRequest&) override {
    return new Handler(*this);
  }

  ~Impl() override {
    if (server_) server_->stopAll(true);
    std::error_code ec;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
  }

  Answer answer_;
  std::string caPem_;
  std::string dir_;
  uint16_t port_ = 0;
  mutable std::mutex mu_;
  std::vector<WebhookCall> calls_;
  std::unique_ptr<Poco::Net::HTTPServer> server_;
};

TestWebhook::TestWebhook(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TestWebhook::~TestWebhook() {
  if (impl_->server_) impl_->server_->stopAll(true);
  impl_->server_.reset();
}

Result<std::unique_ptr<TestWebhook>> TestWebhook::start(Answer answer) {
  // The factory is owned by the HTTPServer (Poco SharedPtr); Impl therefore
  // lives as a raw object kept alive by the TestWebhook and never deleted by Poco.
  auto impl = std::make_unique<Impl>();
  impl->answer_ = std::move(answer);
  auto ca = certs::generateCa("test-webhook-ca", 1, certs::KeyType::EcdsaP256);
  if (!ca) return ca.error();
  auto serving = certs::generateServingCert(*ca, {"localhost"}, {"127.0.0.1"}, 1, certs::KeyType::EcdsaP256);
  if (!serving) return serving.error();
  impl->caPem_ = ca->certificatePem;
  std::string tmpl = (std::filesystem::temp_directory_path() / "test-webhook-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) return Error{"cannot create a temporary directory"};
  impl->dir_ = tmpl;
  const std::string certFile = tmpl + "/tls.crt", keyFile = tmpl + "/tls.key";
  std::ofstream(certFile) << serving->certificatePem;
  std::ofstream(keyFile) << serving->privateKeyPem;
  try {
    Poco::Net::initializeSSL();
    Poco::Net::Context::Ptr context = new Poco::Net::Context(Poco::Net::Context::SERVER_USE, keyFile, certFile, "",
                                                             Poco::Net::Context::VERIFY_NONE);
    Poco::Net::SecureServerSocket socket(Poco::Net::SocketAddress("127.0.0.1", 0), 64, context);
    impl->port_ = socket.address().port();
    Poco::Net::HTTPServerParams::Ptr params = new Poco::Net::HTTPServerParams;
    params->setMaxThreads(16);
    // A non-owning factory pointer: Poco's SharedPtr must not delete impl.
    class Forward : public Poco::Net::HTTPRequestHandlerFactory {
     public:
      explicit Forward(Impl& impl) : impl_(impl) {}
      Poco::Net::HTTPRequestHandler* createRequestHandler(const Poco::Net::HTTPServerRequest& r) override {
        return impl_.createRequestHandler(r);
      }

     private:
      Impl& impl_;
    };
    impl->server_ = std::make_unique<Poco::Net::HTTPServer>(new Forward(*impl), socket, params);
    impl->server_->start();
  } catch (const Poco::Exception& e) {
    return Error{"test webhook: " + e.displayText()};
  }
  return std::unique_ptr<TestWebhook>(new TestWebhook(std::move(impl)));
}

std::string TestWebhook::url(const std::string& path) const {
  return "https://127.0.0.1:" + std::to_string(impl_->port_) + path;
}

const std::string& TestWebhook::caPem() const { return impl_->caPem_; }

std::vector<WebhookCall> TestWebhook::received() const {
  std::lock_guard lock(impl_->mu_);
  return impl_->calls_;
}

WebhookAnswer TestWebhook::allow(const nlohmann::json& review, const nlohmann::json& patch) {
  nlohmann::json response = {{"uid", review["request"]["uid"]}, {"allowed", true}};
  if (!patch.is_null()) {
    response["patchType"] = "JSONPatch";
    response["patch"] = base64Encode(patch.dump());
  }
  return {200, nlohmann::json{{"apiVersion", "admission.k8s.io/v1"}, {"kind", "AdmissionReview"},
                              {"response", response}}
                   .dump()};
}

WebhookAnswer TestWebhook::deny(const nlohmann::json& review, const std::string& message, int code) {
  nlohmann::json response = {{"uid", review["request"]["uid"]},
                             {"allowed", false},
                             {"status", {{"code", code}, {"message", message}}}};
  return {200, nlohmann::json{{"apiVersion", "admission.k8s.io/v1"}, {"kind", "AdmissionReview"},
                              {"response", response}}
                   .dump()};
}

}  // namespace placer::fakeapi
