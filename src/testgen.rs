//! Generated inputs for unit tests of readers that must take any text (a configuration file, a
//! component): texts pieced together from fragments that matter to the reader, by a fixed
//! xorshift sequence, so a failure names the same text on every run and platform.

/// `count` texts of at most `most` pieces each, drawn from `pieces`.
pub(crate) fn pieced(pieces: &[&str], count: usize, most: u64) -> Vec<String> {
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    (0..count)
        .map(|_| {
            let len = next() % (most + 1);
            (0..len)
                .map(|_| pieces[(next() % pieces.len() as u64) as usize])
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_same_texts_every_run_from_the_pieces_given() {
        let a = super::pieced(&["x", "y"], 50, 6);
        assert_eq!(a, super::pieced(&["x", "y"], 50, 6));
        assert!(
            a.iter()
                .all(|t| t.len() <= 6 && t.chars().all(|c| c == 'x' || c == 'y'))
        );
        assert!(a.iter().any(String::is_empty) && a.iter().any(|t| t.len() == 6));
    }
}
