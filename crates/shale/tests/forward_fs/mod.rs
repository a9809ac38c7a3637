//! `forward_fs!`: the `FileSystem` methods a test's wrapping file system
//! does not change, each passed on to its field `inner`. A wrapper writes
//! the methods it alters and names the rest:
//!
//! ```ignore
//! impl FileSystem for Wrapper {
//!     fn sync_dir(&self, dir: &Path) -> shale::Result<()> { /* ... */ }
//!     forward_fs!(new_sequential_file, exists, rename /* , ... */);
//! }
//! ```

macro_rules! forward_fs {
    ($($method:ident),* $(,)?) => { $(forward_fs!(@one $method);)* };
    (@one new_sequential_file) => {
        fn new_sequential_file(
            &self,
            path: &::std::path::Path,
        ) -> ::shale::Result<Box<dyn ::shale::env::SequentialFile>> {
            self.inner.new_sequential_file(path)
        }
    };
    (@one new_random_access_file) => {
        fn new_random_access_file(
            &self,
            path: &::std::path::Path,
        ) -> ::shale::Result<::std::sync::Arc<dyn ::shale::env::RandomAccessFile>> {
            self.inner.new_random_access_file(path)
        }
    };
    (@one new_writable_file) => {
        fn new_writable_file(
            &self,
            path: &::std::path::Path,
        ) -> ::shale::Result<Box<dyn ::shale::env::WritableFile>> {
            self.inner.new_writable_file(path)
        }
    };
    (@one new_log_file) => {
        fn new_log_file(
            &self,
            path: &::std::path::Path,
        ) -> ::shale::Result<Box<dyn ::shale::env::WritableFile>> {
            self.inner.new_log_file(path)
        }
    };
    (@one new_appendable_file) => {
        fn new_appendable_file(
            &self,
            path: &::std::path::Path,
        ) -> ::shale::Result<Box<dyn ::shale::env::WritableFile>> {
            self.inner.new_appendable_file(path)
        }
    };
    (@one exists) => {
        fn exists(&self, path: &::std::path::Path) -> bool {
            self.inner.exists(path)
        }
    };
    (@one children) => {
        fn children(&self, dir: &::std::path::Path) -> ::shale::Result<Vec<String>> {
            self.inner.children(dir)
        }
    };
    (@one remove_file) => {
        fn remove_file(&self, path: &::std::path::Path) -> ::shale::Result<()> {
            self.inner.remove_file(path)
        }
    };
    (@one create_dir_all) => {
        fn create_dir_all(&self, path: &::std::path::Path) -> ::shale::Result<()> {
            self.inner.create_dir_all(path)
        }
    };
    (@one remove_dir) => {
        fn remove_dir(&self, path: &::std::path::Path) -> ::shale::Result<()> {
            self.inner.remove_dir(path)
        }
    };
    (@one file_size) => {
        fn file_size(&self, path: &::std::path::Path) -> ::shale::Result<u64> {
            self.inner.file_size(path)
        }
    };
    (@one rename) => {
        fn rename(&self, from: &::std::path::Path, to: &::std::path::Path) -> ::shale::Result<()> {
            self.inner.rename(from, to)
        }
    };
    (@one lock) => {
        fn lock(
            &self,
            path: &::std::path::Path,
        ) -> ::shale::Result<Box<dyn ::shale::env::FileLock>> {
            self.inner.lock(path)
        }
    };
    (@one sync_dir) => {
        fn sync_dir(&self, dir: &::std::path::Path) -> ::shale::Result<()> {
            self.inner.sync_dir(dir)
        }
    };
}
