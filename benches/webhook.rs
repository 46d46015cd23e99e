//! `wm_webhook::sign` and `wm_webhook::verify` on 256 B, 1 KiB and 16 KiB bodies.
//!
//! Compare with Stripe's Node library: `node .ci/stripe/check.js bench`.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use wm_benches::json_body;

const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const T: i64 = 1_795_000_000;
const SIZES: [(usize, &str); 3] = [(256, "256B"), (1024, "1KiB"), (16 * 1024, "16KiB")];

fn sign(c: &mut Criterion) {
    let mut group = c.benchmark_group("sign");
    for (len, label) in SIZES {
        let body = json_body(len);
        group.throughput(Throughput::Bytes(len as u64));
        group.bench_with_input(BenchmarkId::from_parameter(label), &body, |b, body| {
            b.iter(|| wm_webhook::sign_header(black_box(SECRET), black_box(T), black_box(body)));
        });
    }
    group.finish();
}

fn verify(c: &mut Criterion) {
    let mut group = c.benchmark_group("verify");
    for (len, label) in SIZES {
        let body = json_body(len);
        let header = wm_webhook::sign_header(SECRET, T, &body);
        assert_eq!(wm_webhook::verify(SECRET, &header, &body, T + 10), Ok(()));
        group.throughput(Throughput::Bytes(len as u64));
        group.bench_with_input(BenchmarkId::from_parameter(label), &body, |b, body| {
            b.iter(|| {
                wm_webhook::verify(
                    black_box(SECRET),
                    black_box(&header),
                    black_box(body),
                    black_box(T + 10),
                )
            });
        });
    }
    group.finish();
}

criterion_group!(benches, sign, verify);
criterion_main!(benches);
