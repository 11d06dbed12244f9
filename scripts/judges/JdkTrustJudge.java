// The JDK's own verdict on a TLS server chain: the PKIX X509TrustManager (SunJSSE), with
// the anchors of a file as its only trust anchors, the validation time fixed, revocation off,
// and the installed JDK's jdk.certpath.disabledAlgorithms in force.
//
// Usage:  java JdkTrustJudge.java ANCHORS.pem EPOCH_SECONDS CHAIN.pem [CHAIN.pem...]
//         (or compiled: javac -d DIR JdkTrustJudge.java; java -cp DIR JdkTrustJudge ...)
// Prints one line per chain file (leaf first, then intermediates):
//   ACCEPT <file>
//   REFUSE <file> <the exception's message, causes joined by " <- ">
// Exit 0 when every chain was judged, 3 when an input cannot be read.
import java.io.FileInputStream;
import java.io.InputStream;
import java.security.KeyStore;
import java.security.cert.CertPathValidatorException;
import java.security.cert.CertificateFactory;
import java.security.cert.PKIXBuilderParameters;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Date;
import java.util.List;
import javax.net.ssl.CertPathTrustManagerParameters;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509TrustManager;

public final class JdkTrustJudge {
    public static void main(String[] args) throws Exception {
        if (args.length < 3) {
            System.err.println("usage: JdkTrustJudge ANCHORS.pem EPOCH_SECONDS CHAIN.pem [CHAIN.pem...]");
            System.exit(2);
        }
        CertificateFactory factory = CertificateFactory.getInstance("X.509");
        KeyStore store = KeyStore.getInstance("PKCS12");
        store.load(null, null);
        List<X509Certificate> anchors;
        try {
            anchors = read(factory, args[0]);
        } catch (Exception e) {
            System.err.println("cannot read anchors " + args[0] + ": " + e);
            System.exit(3);
            return;
        }
        int index = 0;
        for (X509Certificate anchor : anchors) store.setCertificateEntry("anchor" + (index++), anchor);
        Date at = new Date(Long.parseLong(args[1]) * 1000L);
        PKIXBuilderParameters parameters = new PKIXBuilderParameters(store, null);
        parameters.setRevocationEnabled(false);
        parameters.setDate(at);
        TrustManagerFactory tmf = TrustManagerFactory.getInstance("PKIX");
        tmf.init(new CertPathTrustManagerParameters(parameters));
        X509TrustManager manager = null;
        for (TrustManager tm : tmf.getTrustManagers()) if (tm instanceof X509TrustManager) manager = (X509TrustManager) tm;
        for (int i = 2; i < args.length; i++) {
            List<X509Certificate> chain;
            try {
                chain = read(factory, args[i]);
            } catch (Exception e) {
                System.out.println("REFUSE " + args[i] + " unreadable by the JDK: " + describe(e));
                continue;
            }
            try {
                // "UNKNOWN" is the authType SunJSSE passes for TLS 1.3 (any key exchange).
                manager.checkServerTrusted(chain.toArray(new X509Certificate[0]), "UNKNOWN");
                System.out.println("ACCEPT " + args[i]);
            } catch (Exception e) {
                System.out.println("REFUSE " + args[i] + " " + describe(e));
            }
        }
    }

    static List<X509Certificate> read(CertificateFactory factory, String path) throws Exception {
        try (InputStream in = new FileInputStream(path)) {
            Collection<? extends java.security.cert.Certificate> all = factory.generateCertificates(in);
            List<X509Certificate> out = new ArrayList<>();
            for (java.security.cert.Certificate c : all) out.add((X509Certificate) c);
            if (out.isEmpty()) throw new IllegalArgumentException("no certificate in " + path);
            return out;
        }
    }

    static String describe(Throwable e) {
        StringBuilder text = new StringBuilder();
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (text.length() > 0) text.append(" <- ");
            text.append(t.getClass().getSimpleName()).append(": ").append(String.valueOf(t.getMessage()).replace('\n', ' '));
            if (t instanceof CertPathValidatorException) {
                CertPathValidatorException c = (CertPathValidatorException) t;
                text.append(" [reason ").append(c.getReason()).append(", index ").append(c.getIndex()).append("]");
            }
        }
        return text.toString();
    }
}
