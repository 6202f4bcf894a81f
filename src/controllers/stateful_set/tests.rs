//! Unit tests of the StatefulSet controller.
