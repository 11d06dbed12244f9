// Java JSSE (com.sun.net.httpserver.HttpsServer) peer for the interop matrix, run by
// scripts/peers/java.sh as a single-file source program (java JsseServer.java ...).
//   NEED_PORT: SSLParameters.setNeedClientAuth(true): a trusted certificate is required in the handshake.
//   WANT_PORT: setWantClientAuth(true): asked for in the handshake; the page answers 403 without one.
// TLS 1.2 and 1.3. Usage: java JsseServer.java CERTDIR NEED_PORT WANT_PORT
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsExchange;
import com.sun.net.httpserver.HttpsParameters;
import com.sun.net.httpserver.HttpsServer;
import java.io.FileInputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.TrustManagerFactory;

public class JsseServer {
    public static void main(String[] args) throws Exception {
        String dir = args[0];
        char[] password = "mtls".toCharArray();
        KeyStore keys = KeyStore.getInstance("PKCS12");
        try (FileInputStream in = new FileInputStream(dir + "/server.p12")) { keys.load(in, password); }
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(keys, password);
        KeyStore trust = KeyStore.getInstance("PKCS12");
        trust.load(null, null);
        int n = 0;
        try (FileInputStream in = new FileInputStream(dir + "/client-ca.pem")) {
            for (Certificate c : CertificateFactory.getInstance("X.509").generateCertificates(in)) trust.setCertificateEntry("ca" + n++, c);
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(kmf.getKeyManagers(), tmf.getTrustManagers(), null);
        start(context, Integer.parseInt(args[1]), true);
        start(context, Integer.parseInt(args[2]), false);
    }

    static void start(SSLContext context, int port, boolean need) throws Exception {
        HttpsServer server = HttpsServer.create(new InetSocketAddress("127.0.0.1", port), 16);
        server.setHttpsConfigurator(new HttpsConfigurator(context) {
            @Override
            public void configure(HttpsParameters params) {
                SSLParameters p = context.getDefaultSSLParameters();
                p.setProtocols(new String[] {"TLSv1.3", "TLSv1.2"});
                if (need) p.setNeedClientAuth(true); else p.setWantClientAuth(true);
                params.setSSLParameters(p);
            }
        });
        server.createContext("/", exchange -> {
            String text;
            int status;
            try {
                X509Certificate peer = (X509Certificate) ((HttpsExchange) exchange).getSSLSession().getPeerCertificates()[0];
                status = 200;
                text = "client certificate: " + peer.getSubjectX500Principal().getName() + "\n";
            } catch (SSLPeerUnverifiedException e) {
                status = 403;
                text = "client certificate required\n";
            }
            byte[] body = text.getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().set("Content-Type", "text/plain");
            exchange.sendResponseHeaders(status, body.length);
            try (OutputStream out = exchange.getResponseBody()) { out.write(body); }
        });
        server.start();
    }
}
