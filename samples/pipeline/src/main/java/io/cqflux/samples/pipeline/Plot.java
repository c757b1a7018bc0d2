package io.cqflux.samples.pipeline;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.function.ToDoubleFunction;
import javax.imageio.ImageIO;

/** Draws the samples as a PNG with Java2D (headless): throughput above, in-flight operations and ring occupancy below. */
final class Plot {
    private static final int W = 960;
    private static final int H = 560;
    private static final int LEFT = 80;
    private static final int RIGHT = 80;

    private Plot() {
    }

    static void write(List<Sample> samples, String title, int sendCredits, int ringSlots, Path png) throws IOException {
        System.setProperty("java.awt.headless", "true");
        BufferedImage img = new BufferedImage(W, H, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = img.createGraphics();
        try {
            g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
            g.setColor(Color.WHITE);
            g.fillRect(0, 0, W, H);
            g.setColor(Color.BLACK);
            g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 14));
            g.drawString(title, LEFT, 22);
            double tMax = Math.max(1e-3, samples.isEmpty() ? 1 : samples.getLast().seconds());
            panel(g, samples, tMax, 40, 240, "MB/s (verified records)", s -> s.mbPerSecond(), new Color(0x1f77b4),
                    "records/s", s -> s.recordsPerSecond(), new Color(0xff7f0e), 0, 0, false);
            panel(g, samples, tMax, 310, 210, "in-flight ops (of " + sendCredits + " credits)", s -> s.inFlight(),
                    new Color(0x2ca02c), "ring occupied (of " + ringSlots + " slots)", s -> s.ringOccupied(),
                    new Color(0xd62728), sendCredits, ringSlots, true);
        } finally {
            g.dispose();
        }
        ImageIO.write(img, "png", png.toFile());
    }

    private static void panel(Graphics2D g, List<Sample> samples, double tMax, int top, int height,
                              String leftName, ToDoubleFunction<Sample> left, Color leftColor,
                              String rightName, ToDoubleFunction<Sample> right, Color rightColor,
                              double leftFloor, double rightFloor, boolean xLabel) {
        int x0 = LEFT;
        int x1 = W - RIGHT;
        int y0 = top + height;
        double lMax = nice(Math.max(leftFloor, max(samples, left)));
        double rMax = nice(Math.max(rightFloor, max(samples, right)));
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
        g.setStroke(new BasicStroke(1f));
        for (int i = 0; i <= 4; i++) {
            int y = y0 - i * height / 4;
            g.setColor(new Color(0xE0E0E0));
            g.drawLine(x0, y, x1, y);
            g.setColor(leftColor.darker());
            g.drawString(label(lMax * i / 4), 8, y + 4);
            g.setColor(rightColor.darker());
            g.drawString(label(rMax * i / 4), x1 + 6, y + 4);
        }
        g.setColor(Color.BLACK);
        g.drawRect(x0, top, x1 - x0, height);
        for (int i = 0; i <= 5; i++) {
            int x = x0 + (x1 - x0) * i / 5;
            g.drawLine(x, y0, x, y0 + 4);
            g.drawString(String.format("%.1f s", tMax * i / 5), x - 14, y0 + 16);
        }
        g.setColor(leftColor);
        g.drawString(leftName, x0 + 6, top + 14);
        g.setColor(rightColor);
        g.drawString(rightName, x0 + 6, top + 28);
        // The bounds (send credits, ring slots), dashed: the lines must stay under them.
        limit(g, leftFloor, lMax, x0, x1, y0, height, leftColor);
        limit(g, rightFloor, rMax, x0, x1, y0, height, rightColor);
        line(g, samples, left, lMax, tMax, x0, x1, y0, height, leftColor);
        line(g, samples, right, rMax, tMax, x0, x1, y0, height, rightColor);
        if (xLabel) {
            g.setColor(Color.BLACK);
            g.drawString("time since start", (x0 + x1) / 2 - 40, y0 + 32);
        }
    }

    private static void line(Graphics2D g, List<Sample> samples, ToDoubleFunction<Sample> f, double max, double tMax,
                             int x0, int x1, int y0, int height, Color c) {
        g.setColor(c);
        g.setStroke(new BasicStroke(2f));
        int px = -1;
        int py = -1;
        for (Sample s : samples) {
            int x = x0 + (int) Math.round((x1 - x0) * s.seconds() / tMax);
            int y = y0 - (int) Math.round(height * Math.min(1, f.applyAsDouble(s) / max));
            if (px >= 0) {
                g.drawLine(px, py, x, y);
            }
            g.fillOval(x - 2, y - 2, 4, 4);
            px = x;
            py = y;
        }
    }

    private static void limit(Graphics2D g, double bound, double max, int x0, int x1, int y0, int height, Color c) {
        if (bound <= 0) {
            return;
        }
        int y = y0 - (int) Math.round(height * bound / max);
        g.setColor(c);
        g.setStroke(new BasicStroke(1f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10f, new float[] {6f, 4f}, 0f));
        g.drawLine(x0, y, x1, y);
    }

    private static double max(List<Sample> samples, ToDoubleFunction<Sample> f) {
        double m = 0;
        for (Sample s : samples) {
            m = Math.max(m, f.applyAsDouble(s));
        }
        return m;
    }

    /** The next of 1, 2, 5 times a power of ten at or above {@code v}. */
    private static double nice(double v) {
        if (v <= 0) {
            return 1;
        }
        double p = Math.pow(10, Math.floor(Math.log10(v)));
        for (double m : new double[] {1, 2, 5, 10}) {
            if (m * p >= v) {
                return m * p;
            }
        }
        return 10 * p;
    }

    private static String label(double v) {
        if (v >= 1e6) {
            return String.format("%.1fM", v / 1e6);
        }
        if (v >= 1e4) {
            return String.format("%.0fk", v / 1e3);
        }
        return String.format("%.0f", v);
    }
}
