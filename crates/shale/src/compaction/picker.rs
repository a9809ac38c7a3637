//! Picking a compaction: which level, which files (LevelDB's
//! `VersionSet::PickCompaction` and `CompactRange`). A level is compacted when
//! its size score reaches 1 or when one of its files has used up its seeks;
//! its inputs grow to whole user keys and, when that pulls in no more files of
//! the next level, to more files of its own level.

use crate::keys::{InternalKey, InternalKeyComparator};
use crate::version::set::VersionSet;
use crate::version::version::{key_range, total_file_size, LevelFiles};
use crate::version::NUM_LEVELS;

use super::Compaction;

impl VersionSet {
    /// Picks the next compaction: by size first, then by seeks.
    pub fn pick_compaction(&mut self) -> Option<Compaction> {
        let current = self.current.clone();
        let size_compaction = current.compaction_score >= 1.0;
        let seek_target = current.file_to_compact.lock().clone();
        let (level, mut inputs0) = if size_compaction {
            let level = current.compaction_level;
            let files = &current.files[level];
            let ptr = &self.compact_pointer[level];
            let first = files
                .iter()
                .find(|f| {
                    ptr.is_empty()
                        || self.icmp.compare(f.largest.encoded(), ptr)
                            == std::cmp::Ordering::Greater
                })
                .or_else(|| files.first())?;
            (level, vec![first.clone()])
        } else if let Some((f, level)) = seek_target {
            (level, vec![f])
        } else {
            return None;
        };
        if level + 1 >= NUM_LEVELS {
            return None;
        }
        if level == 0 {
            let (smallest, largest) = key_range(&self.icmp, &inputs0);
            inputs0 = current.overlapping_inputs(0, Some(&smallest), Some(&largest));
        }
        let mut c = Compaction::new(&self.options, current, level);
        c.inputs[0] = inputs0;
        self.setup_other_inputs(&mut c);
        Some(c)
    }

    /// A compaction of the files of `level` overlapping the user-key range
    /// [begin, end], or `None` if there are none.
    pub fn compact_range(
        &mut self,
        level: usize,
        begin: Option<&InternalKey>,
        end: Option<&InternalKey>,
    ) -> Option<Compaction> {
        let current = self.current.clone();
        let mut inputs = current.overlapping_inputs(level, begin, end);
        if inputs.is_empty() || level + 1 >= NUM_LEVELS {
            return None;
        }
        // Avoid compacting too much in one shot at levels > 0; level-0 files
        // overlap and must all be compacted together.
        if level > 0 {
            let limit = self.options.max_file_size as u64;
            let mut total = 0;
            for i in 0..inputs.len() {
                total += inputs[i].file_size;
                if total >= limit {
                    inputs.truncate(i + 1);
                    break;
                }
            }
        }
        let mut c = Compaction::new(&self.options, current, level);
        c.inputs[0] = inputs;
        self.setup_other_inputs(&mut c);
        Some(c)
    }

    fn setup_other_inputs(&mut self, c: &mut Compaction) {
        let level = c.level;
        let current = c.input_version.clone();
        add_boundary_inputs(&self.icmp, &current.files[level], &mut c.inputs[0]);
        let (smallest, largest) = key_range(&self.icmp, &c.inputs[0]);
        c.inputs[1] = current.overlapping_inputs(level + 1, Some(&smallest), Some(&largest));
        add_boundary_inputs(&self.icmp, &current.files[level + 1], &mut c.inputs[1]);

        let all: Vec<_> = c.inputs[0]
            .iter()
            .chain(c.inputs[1].iter())
            .cloned()
            .collect();
        let (mut all_start, mut all_limit) = key_range(&self.icmp, &all);

        // Grow the level inputs if that does not pull in more files of level + 1.
        if !c.inputs[1].is_empty() {
            let mut expanded0 =
                current.overlapping_inputs(level, Some(&all_start), Some(&all_limit));
            add_boundary_inputs(&self.icmp, &current.files[level], &mut expanded0);
            let inputs1_size = total_file_size(&c.inputs[1]);
            let expanded0_size = total_file_size(&expanded0);
            let limit = 25 * self.options.max_file_size as u64;
            if expanded0.len() > c.inputs[0].len() && inputs1_size + expanded0_size < limit {
                let (new_start, new_limit) = key_range(&self.icmp, &expanded0);
                let mut expanded1 =
                    current.overlapping_inputs(level + 1, Some(&new_start), Some(&new_limit));
                add_boundary_inputs(&self.icmp, &current.files[level + 1], &mut expanded1);
                if expanded1.len() == c.inputs[1].len() {
                    c.inputs[0] = expanded0;
                    c.inputs[1] = expanded1;
                    let all: Vec<_> = c.inputs[0]
                        .iter()
                        .chain(c.inputs[1].iter())
                        .cloned()
                        .collect();
                    (all_start, all_limit) = key_range(&self.icmp, &all);
                }
            }
        }

        if level + 2 < NUM_LEVELS {
            c.grandparents =
                current.overlapping_inputs(level + 2, Some(&all_start), Some(&all_limit));
        }

        // The next compaction of this level starts after this one's range,
        // even if this one fails: recorded now and in the edit.
        let (_, largest) = key_range(&self.icmp, &c.inputs[0]);
        self.compact_pointer[level] = largest.encoded().to_vec();
        c.edit.compact_pointers.push((level as u32, largest));
    }
}

/// Adds to `inputs` the files of `level_files` whose smallest user key equals
/// the largest user key of `inputs`: otherwise an older entry for that user
/// key could be left at the lower level while a newer one moves down.
fn add_boundary_inputs(
    icmp: &InternalKeyComparator,
    level_files: &LevelFiles,
    inputs: &mut LevelFiles,
) {
    if inputs.is_empty() {
        return;
    }
    let (_, mut largest) = key_range(icmp, inputs);
    loop {
        let ucmp = icmp.user_comparator();
        let boundary = level_files
            .iter()
            .filter(|f| {
                icmp.compare(f.smallest.encoded(), largest.encoded()) == std::cmp::Ordering::Greater
                    && ucmp.compare(f.smallest.user_key(), largest.user_key())
                        == std::cmp::Ordering::Equal
            })
            .min_by(|a, b| icmp.compare(a.smallest.encoded(), b.smallest.encoded()));
        match boundary {
            Some(f) if !inputs.iter().any(|g| g.number == f.number) => {
                largest = f.largest.clone();
                inputs.push(f.clone());
            }
            _ => break,
        }
    }
}
