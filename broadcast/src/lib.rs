//! # komorebi-broadcast
#![no_std]
