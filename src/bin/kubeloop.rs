//! The native `kubeloop` command line: a shell over the library, for scripts and tests.
fn main() {
    println!("kubeloop {}", kubeloop::VERSION);
}
