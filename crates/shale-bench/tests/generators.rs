//! The key and value streams equal LevelDB db_bench's.

use shale_bench::keygen::{KeyBuffer, ValueBuffer};
use shale_bench::random::Random;

/// Random(301)'s first outputs, from the definition seed' = seed * 16807 mod
/// (2^31 - 1), M = 2147483647:
///   301 * 16807            = 5058907             (< M, so 5058907)
///   5058907 * 16807        = 85025049949         = 39 * M + 1273187716
///   1273187716 * 16807     = 21398465942812      = 9964 * M + 938884104
#[test]
fn seed_301_starts_like_the_lcg_definition() {
    let mut r = Random::new(301);
    assert_eq!(r.next(), 5_058_907);
    assert_eq!(r.next(), 1_273_187_716);
    assert_eq!(r.next(), 938_884_104);
    // Check the two multiples used above.
    assert_eq!(85_025_049_949u64 - 39 * 2_147_483_647, 1_273_187_716);
    assert_eq!(21_398_465_942_812u64 - 9964 * 2_147_483_647, 938_884_104);
}

#[test]
fn uniform_is_next_modulo_n() {
    let mut a = Random::new(12345);
    let mut b = Random::new(12345);
    for n in [1u32, 2, 7, 100, 1_000_000, 2_147_483_647] {
        assert_eq!(a.uniform(n), b.next() % n);
    }
}

/// db_bench 1.23 seeds the n-th benchmark thread of a run with 1000 + n, so
/// `db_bench --benchmarks=fillrandom --num=1000000` draws its keys from
/// Random(1001), and with the default benchmark list (fillseq, fillsync,
/// fillrandom, ...) fillrandom is the third thread: Random(1003).
#[test]
fn first_fillrandom_keys_for_a_million_entries() {
    let keys = |seed: u32| -> Vec<u32> {
        let mut r = Random::new(seed);
        (0..8).map(|_| r.uniform(1_000_000)).collect()
    };
    assert_eq!(
        keys(1001),
        [823807, 366492, 85941, 607685, 255079, 564579, 840135, 332565]
    );
    assert_eq!(
        keys(1003),
        [857421, 316990, 902440, 11354, 989292, 987123, 895223, 550674]
    );
    let mut kb = KeyBuffer::new(16, 0);
    assert_eq!(kb.set(823_807), b"0000000000823807");
}

#[test]
fn value_buffer_starts_with_pinned_bytes() {
    let buf = ValueBuffer::new(0.5);
    let bytes = buf.bytes();
    // The first 100-byte piece: 50 characters from Random(301), twice.
    let first = b"^{Vhz\"!/%wMZ;'a F/REZJ4Tw@%NXxy2?.ArVCZ2B6[jnUd)4 ";
    assert_eq!(&bytes[..50], first);
    assert_eq!(&bytes[50..100], first);
    let mut g = buf.generator();
    assert_eq!(g.generate(100), &bytes[..100]);
    assert_eq!(g.generate(10), &bytes[100..110]);
}

#[test]
fn value_buffer_compresses_to_about_the_ratio() {
    for ratio in [0.25, 0.5, 0.75] {
        let buf = ValueBuffer::new(ratio);
        let compressed = snap::raw::Encoder::new()
            .compress_vec(buf.bytes())
            .expect("compress");
        let achieved = compressed.len() as f64 / buf.bytes().len() as f64;
        assert!(
            (achieved - ratio).abs() < 0.08,
            "ratio {ratio}: snappy output is {achieved:.3} of the input"
        );
    }
}
